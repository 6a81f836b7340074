import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// A deterministic replay of what `FuzzColorProfile` does at random: Debian's profiles with bytes flipped, tag
/// tables scrambled, sizes cut or lied about, embedded in PNG, JPEG and WebP and used as a target. No decode may
/// fail and none may crash, whatever lcms makes of the profile.
final class ColorProfileMutationTests: XCTestCase {
    func testMutatedProfilesNeverFailADecode() throws {
        let paths = [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB, ColorTestSupport.swappedRedGreen,
                     "/usr/share/color/icc/sRGB.icc", "/usr/share/color/icc/colord/ProPhotoRGB.icc", "/usr/share/color/icc/Gray.icc"]
        try ColorTestSupport.require(tools: [], files: paths)
        let seeds = try paths.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let chart = try ColorTestSupport.chart(size: 16)
        let plain = try [ImageFormat.png, .jpeg, .webp].map { ($0, try Image(buffer: chart).encoded(as: $0, isLossless: true)) }
        var random = SplitMix64(seed: 0xC010_0305)
        var decoded = 0
        for iteration in 0..<240 {
            var profile = [UInt8](seeds[random.next(upTo: seeds.count)])
            switch iteration % 6 {
            case 0:  // flip bytes anywhere
                for _ in 0..<(1 + random.next(upTo: 8)) { profile[random.next(upTo: profile.count)] ^= UInt8(1 + random.next(upTo: 255)) }
            case 1:  // scramble the tag table (count, signatures, offsets, sizes)
                let end = min(profile.count, 132 + 12 * 24)
                for _ in 0..<(1 + random.next(upTo: 6)) { profile[128 + random.next(upTo: end - 128)] = UInt8(random.next(upTo: 256)) }
            case 2:  // cut short, keeping the declared size
                profile = Array(profile.prefix(max(1, random.next(upTo: profile.count))))
            case 3:  // lie about the size
                let size = UInt32(random.next(upTo: 1 << 24))
                profile[0] = UInt8(size >> 24); profile[1] = UInt8((size >> 16) & 255)
                profile[2] = UInt8((size >> 8) & 255); profile[3] = UInt8(size & 255)
            case 4:  // another colour space or class in the header
                profile[16 + random.next(upTo: 4)] = UInt8(random.next(upTo: 256))
                profile[12 + random.next(upTo: 4)] = UInt8(random.next(upTo: 256))
            default:  // random bytes with a valid-looking header
                let header = Array(profile.prefix(128))
                profile = header + (0..<random.next(upTo: 2000)).map { _ in UInt8(random.next(upTo: 256)) }
            }
            let bytes = Data(profile)
            for (format, data) in plain {
                let tagged = ICCEmbedding.embed(bytes, in: data, format: format, width: 16, height: 16)
                do {
                    let image = try ColorTestSupport.decode(tagged, maxPixelSize: iteration % 2 == 0 ? nil : 8)
                    XCTAssertGreaterThan(image.width, 0)
                    decoded += 1
                } catch {
                    XCTFail("iteration \(iteration) \(format): a mutated profile failed the decode: \(error)")
                }
            }
            XCTAssertNoThrow(try ColorTestSupport.decode(plain[0].1, .target(bytes)), "iteration \(iteration): as a target")
        }
        XCTAssertEqual(decoded, 240 * 3)
        XCTAssertLessThanOrEqual(ColorTransformCache.shared.count, ColorTransformCache.shared.countLimit)
        XCTAssertLessThanOrEqual(ColorTransformCache.shared.byteCount, ColorTransformCache.shared.byteLimit)
    }
}
