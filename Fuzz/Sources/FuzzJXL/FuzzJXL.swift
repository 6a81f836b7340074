// libFuzzer target: the WebImageJXL module (libjxl 0.7) on any bytes, one-shot and incremental.
//
// Every input goes to the JPEG XL decoder directly (header, full decode with every frame, first frame only),
// then through `IncrementalDecoder` with the module registered, in chunks whose size the input's last byte
// picks, asking for a partial image after each (`JxlDecoderFlushImage`); once final it must give what the
// one-shot decode gives. libjxl 0.7 aborts the process when an allocation fails, so the limits (checked at
// JXL_DEC_BASIC_INFO) must stop every large header. Any trap or sanitizer report is a bug.
import Foundation
import WebImage
import WebImageJXL

private let fuzzLimits = DecodeLimits(maxPixelsPerFrame: 2048 * 2048, maxTotalPixels: 1 << 24, maxFrameCount: 64)
private let registered: Void = { JXLCodec.register() }()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJXL(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    _ = registered
    let data = Data(buffer: UnsafeBufferPointer(start: start, count: count))
    let decoder = JXLDecoder()
    let options = DecodeOptions(limits: fuzzLimits, pixelFormat: .rgba8)
    do { _ = try decoder.info(data) } catch { /* expected for bad input: a typed error */ }
    let oneShot = Result { try decoder.decode(data, options: options) }
    do { _ = try decoder.decode(data, options: DecodeOptions(limits: fuzzLimits, firstFrameOnly: true)) } catch {
        // Expected for bad input.
    }
    guard ImageFormat.sniff(data) == .jpegXL else { return 0 }
    let incremental = IncrementalDecoder(options: options)
    let chunk = max(1, data.count / 8, Int(data[data.endIndex - 1]) * 16)  // at most 8 partial images
    var offset = 0
    do {
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            try incremental.update(data.subdata(in: offset..<end), isFinal: false)
            offset = end
            if let partial = try incremental.makeImage() { precondition(partial.width > 0, "an empty partial image") }
        }
        try incremental.update(Data(), isFinal: true)
    } catch {
        // update throws only after the final data; makeImage does not before it.
        preconditionFailure("IncrementalDecoder threw before the final data: \(error)")
    }
    switch (oneShot, Result { try incremental.makeImage() }) {
    case let (.success(a), .success(b?)): precondition(a.firstFrame.buffer == b.firstFrame.buffer, "final image differs from one-shot")
    case (.failure, .failure): break
    default: preconditionFailure("incremental and one-shot outcomes differ")
    }
    return 0
}
