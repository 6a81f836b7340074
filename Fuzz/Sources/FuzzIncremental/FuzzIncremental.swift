// libFuzzer target for `IncrementalDecoder`.
//
// Input layout: byte 0 picks the chunk size (1 + byte0 * 16 bytes, at least 1/64 of the image), the rest is the image. The image is fed
// in those chunks, asking for the partial image after each, then finished; the final image must equal a
// one-shot decode of the same bytes, pixel for pixel, whenever both succeed.
import Foundation
import WebImage

private let fuzzLimits = DecodeLimits(maxPixelsPerFrame: 2048 * 2048, maxTotalPixels: 1 << 24, maxFrameCount: 256)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIncremental(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 1 else { return 0 }
    let data = Data(UnsafeBufferPointer(start: start + 1, count: count - 1))
    // At most 64 chunks per input: each partial image can cost a copy of the full-size pixels (and GIF and
    // the JPEG fallback re-decode the bytes so far), so tiny chunks over a large input would spend the
    // fuzzer's time (and its per-input timeout) on quadratic work.
    let chunkSize = max(1 + Int(start[0]) * 16, data.count / 64)
    let options = DecodeOptions(limits: fuzzLimits)
    let decoder = IncrementalDecoder(options: options)
    var offset = 0
    while offset < data.count {
        let end = min(data.count, offset + chunkSize)
        do {
            try decoder.update(Data(data[offset..<end]), isFinal: false)
            _ = try decoder.makeImage()
        } catch {
            return 0 // a typed error is the expected outcome for bad input
        }
        offset = end
    }
    do {
        try decoder.update(Data(), isFinal: true)
        guard let incremental = try decoder.makeImage() else { return 0 }
        let oneShot = try ImageDecoder.decode(data, options: options)
        precondition(incremental.width == oneShot.width && incremental.height == oneShot.height,
                     "incremental and one-shot decodes disagree on the size")
        precondition(incremental.firstFrame.buffer == oneShot.firstFrame.buffer,
                     "incremental and one-shot decodes disagree on the pixels")
    } catch {
        // Expected for bad input.
    }
    return 0
}
