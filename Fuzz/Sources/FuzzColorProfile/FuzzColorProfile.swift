// libFuzzer target: ICC profiles, random and mutated (seeded from Debian's standard profiles), through the colour
// stage, both as a source and as a target.
//
// The input is the profile. It is embedded in a small chart encoded as JPEG, PNG and WebP (the encoders write
// an image's `pixelICCProfile`), each decoded to sRGB at full size and as a thumbnail; then it is used as the
// `.target` of a decode. Bad colour data must never fail a decode: every decode here must succeed, whatever the
// profile (an unusable one is ignored and the image decodes as untagged). Any trap or sanitizer report is a bug.
import Foundation
import WebImage

/// A 24 × 16 chart: hue and grey ramps with a transparent corner.
private let chart: PixelBuffer = {
    var buffer = try! PixelBuffer(width: 24, height: 16, pixelFormat: .rgba8)
    for y in 0..<16 {
        for x in 0..<24 {
            let v = UInt8(x * 255 / 23)
            let pixel: RGBA
            switch y / 4 {
            case 0: pixel = RGBA(r: v, g: 255 - v, b: 40)
            case 1: pixel = RGBA(r: 30, g: v, b: 255 - v)
            case 2: pixel = RGBA(r: v, g: v, b: v)
            default: pixel = RGBA(r: 255, g: 128, b: v, a: x < 4 ? 0 : 255)
            }
            buffer.setPixel(x: x, y: y, to: pixel)
        }
    }
    return buffer
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzColorProfile(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0, count <= 6 << 20 else { return 0 }
    let profile = Data(UnsafeBufferPointer(start: start, count: count))
    let tagged = Image(frames: [ImageFrame(buffer: chart)], format: .unknown, loopCount: 1, hasAlpha: true,
                       pixelICCProfile: profile)
    for format in [ImageFormat.jpeg, .png, .webp] {
        guard let data = try? tagged.encoded(as: format, quality: 0.9, isLossless: format == .webp) else {
            preconditionFailure("encoding the chart as \(format) failed")
        }
        for maxPixelSize in [nil, 10] as [Int?] {
            do {
                let image = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: maxPixelSize))
                precondition(image.width > 0 && image.pixelICCProfile == nil, "an sRGB decode has no pixel profile")
            } catch {
                preconditionFailure("a profile failed the decode of a valid \(format): \(error)")
            }
        }
    }
    do {
        let png = try Image(buffer: chart).encoded(as: .png)
        let image = try ImageDecoder.decode(png, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .target(profile)))
        precondition(image.width == 24, "target decode changed the size")
    } catch {
        preconditionFailure("a target profile failed a decode: \(error)")
    }
    return 0
}
