// libFuzzer target: the WebImageHEIF module (libheif 1.15 + libde265) on any bytes.
//
// Every input goes to the HEIF decoder directly (header, then a full decode and a thumbnail) with small
// limits: libheif's size limit is set from them before reading, and the buffer is sized from the decoded
// image. Any trap, sanitizer report or leak is a bug; a thrown `ImageCodecError` is expected for bad input.
import Foundation
import WebImage
import WebImageHEIF

private let fuzzLimits = DecodeLimits(maxPixelsPerFrame: 2048 * 2048, maxTotalPixels: 1 << 24, maxFrameCount: 64)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHEIF(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let data = Data(buffer: UnsafeBufferPointer(start: start, count: count))
    let decoder = HEIFDecoder()
    do { _ = try decoder.info(data) } catch { /* expected for bad input: a typed error */ }
    do {
        let image = try decoder.decode(data, options: DecodeOptions(limits: fuzzLimits))
        precondition(image.width * image.height <= fuzzLimits.maxPixelsPerFrame, "decoded past the limits")
    } catch {
        // Expected for bad input.
    }
    do {
        let thumbnail = try decoder.decode(data, options: DecodeOptions(limits: fuzzLimits, pixelFormat: .rgba8, maxPixelSize: 48))
        precondition(max(thumbnail.width, thumbnail.height) <= 48, "thumbnail too large")
    } catch {
        // Expected for bad input.
    }
    return 0
}
