// libFuzzer target: the WebImageAVIF module (libavif 0.11 + dav1d) on any bytes.
//
// Every input goes to the AVIF decoder directly (not through sniffing, so libavif sees every mutation): the
// header (`info`), a full decode with every frame of a sequence, and a thumbnail. Small limits keep bombs
// cheap: they must be refused from the header with a typed error. Any trap, sanitizer report or leak is a
// bug; a thrown `ImageCodecError` is the expected outcome for bad input.
import Foundation
import WebImage
import WebImageAVIF

private let fuzzLimits = DecodeLimits(maxPixelsPerFrame: 2048 * 2048, maxTotalPixels: 1 << 24, maxFrameCount: 64)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAVIF(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let data = Data(buffer: UnsafeBufferPointer(start: start, count: count))
    let decoder = AVIFDecoder()
    do { _ = try decoder.info(data) } catch { /* expected for bad input: a typed error */ }
    do {
        let image = try decoder.decode(data, options: DecodeOptions(limits: fuzzLimits))
        for index in 0..<image.frameCount {
            let frame = try image.frame(at: index)
            precondition(frame.buffer.width == image.width, "a frame of another width")
        }
    } catch {
        // Expected for bad input.
    }
    do {
        let thumbnail = try decoder.decode(data, options: DecodeOptions(limits: fuzzLimits, pixelFormat: .rgba8,
                                                                        firstFrameOnly: true, maxPixelSize: 48))
        precondition(max(thumbnail.width, thumbnail.height) <= 48, "thumbnail too large")
    } catch {
        // Expected for bad input.
    }
    return 0
}
