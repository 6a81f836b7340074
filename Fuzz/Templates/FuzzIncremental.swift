// TEMPLATE, not compiled: the libFuzzer target for the incremental decoder, ready for when
// `IncrementalDecoder` lands in Sources/ImageCodec (it did not exist when the fuzz suite was written).
//
// To enable it:
//   1. move this file to Fuzz/Sources/FuzzIncremental/FuzzIncremental.swift and adjust the three calls
//      marked ADJUST to the real API;
//   2. add `.executableTarget(name: "FuzzIncremental", dependencies: [.product(name: "WebImage", package:
//      "WebImage")])` to Fuzz/Package.swift;
//   3. add FuzzIncremental to FUZZ_TARGETS in the Makefile (its seeds, FUZZ_SEEDS_FuzzIncremental, are the
//      corpus folders already).
//
// Input layout: byte 0 picks the chunk size (1 + byte0 * 16 bytes), the rest is the image. The image is fed
// in those chunks, asking for the partial image after each, then finished; the final image must match a
// one-shot decode of the same bytes whenever both succeed.
import Foundation
import WebImage

private let fuzzLimits = DecodeLimits(maxPixelsPerFrame: 2048 * 2048, maxTotalPixels: 1 << 24, maxFrameCount: 256)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIncremental(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 1 else { return 0 }
    let chunkSize = 1 + Int(start[0]) * 16
    let data = Data(UnsafeBufferPointer(start: start + 1, count: count - 1))
    let options = DecodeOptions(limits: fuzzLimits)
    let decoder = IncrementalDecoder(options: options)                 // ADJUST
    var offset = 0
    while offset < data.count {
        let end = min(data.count, offset + chunkSize)
        do {
            try decoder.append(data[offset..<end])                      // ADJUST
            _ = try decoder.partialImage()                              // ADJUST
        } catch {
            return 0 // a typed error is the expected outcome for bad input
        }
        offset = end
    }
    do {
        let incremental = try decoder.finish()                          // ADJUST
        let oneShot = try ImageDecoder.decode(data, options: options)
        precondition(incremental.width == oneShot.width && incremental.height == oneShot.height,
                     "incremental and one-shot decodes disagree on the size")
    } catch {
        // Expected for bad input.
    }
    return 0
}
