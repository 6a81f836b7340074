// libFuzzer target: format sniffing and decoding of every format (JPEG, PNG, APNG, GIF, WebP).
//
// Every input is sniffed (both `sniff` overloads), its header read (`ImageDecoder.info`), then decoded at full
// size with every frame of an animation (lazily, as the player does), and once more as a thumbnail in the
// straight-alpha format. Small limits keep bombs cheap: the decoders must refuse them from the header with a
// typed error. Any trap, sanitizer report or leak is a bug; a thrown `ImageCodecError` is the expected outcome
// for bad input.
import Foundation
import WebImage

/// Small enough that a fuzzer iteration stays fast; large enough for every corpus image.
private let fuzzLimits = DecodeLimits(maxPixelsPerFrame: 2048 * 2048, maxTotalPixels: 1 << 24, maxFrameCount: 256)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let buffer = UnsafeBufferPointer(start: start, count: count)
    let data = Data(buffer: buffer)
    let sniffed = ImageFormat.sniff(UnsafeRawBufferPointer(buffer))
    precondition(sniffed == ImageFormat.sniff(data), "the two sniff overloads disagree")
    do {
        _ = try ImageDecoder.info(data)
    } catch {
        // Expected for bad input: a typed error.
    }
    do {
        let image = try ImageDecoder.decode(data, options: DecodeOptions(limits: fuzzLimits))
        precondition(image.width > 0 && image.height > 0, "decoded an empty image")
        for index in 0..<image.frameCount {
            let frame = try image.frame(at: index)
            precondition(frame.buffer.width > 0 && frame.buffer.height > 0, "decoded an empty frame")
        }
    } catch {
        // Expected for bad input.
    }
    do {
        let thumbnail = try ImageDecoder.decode(
            data,
            options: DecodeOptions(limits: fuzzLimits, pixelFormat: .rgba8, firstFrameOnly: true,
                                   keepsOriginalData: false, maxPixelSize: 48))
        precondition(max(thumbnail.width, thumbnail.height) > 0, "decoded an empty thumbnail")
    } catch {
        // Expected for bad input.
    }
    return 0
}
