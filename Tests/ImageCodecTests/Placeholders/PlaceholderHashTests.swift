import Foundation
import ImageCodec
import TestSupport
import XCTest

/// BlurHash and ThumbHash against their reference implementations. Neither repository ships its test images as
/// text, so the inputs are images both sides can make exactly: a formula (below) and small corpus PNGs (lossless,
/// untagged). The expected values were computed with the references on the same pixels:
/// BlurHash with woltapp's C encoder/decoder (PyPI `blurhash-python` 1.2.2), ThumbHash with evanw/thumbhash's
/// `js/thumbhash.js` under Node. The widely published vector "LFE.@D9F01_2%L%MIVD*9Goe-;WB" (woltapp's
/// 204 × 204 test image) needs that image, which is not here.
final class PlaceholderHashTests: XCTestCase {
    /// The formula image: r = x·255/(w−1), g = y·255/(h−1), b = (x·y/8) mod 256 (integer arithmetic); with alpha,
    /// a = 0 left of w/4, then rising by 8 a column to 255.
    static func formula(width w: Int, height h: Int, alpha: Bool) throws -> PixelBuffer {
        var bytes = [UInt8]()
        for y in 0..<h {
            for x in 0..<w {
                let a = !alpha ? 255 : (x < w / 4 ? 0 : min(255, (x - w / 4) * 8))
                bytes += [UInt8(x * 255 / (w - 1)), UInt8(y * 255 / (h - 1)), UInt8((x * y / 8) % 256), UInt8(a)]
            }
        }
        return try PixelBuffer(width: w, height: h, pixelFormat: .rgba8, bytes: bytes)
    }

    static func corpusPNG(_ name: String, folder: String = "png") throws -> PixelBuffer {
        let dir: URL
        do { dir = try Corpus.require() } catch let missing as Corpus.Missing { throw XCTSkip("\(missing)") }
        let data = try Data(contentsOf: dir.appendingPathComponent(folder).appendingPathComponent(name))
        return try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, firstFrameOnly: true)).firstFrame.buffer
    }

    // MARK: BlurHash

    func testBlurHashMatchesTheReferenceEncoder() throws {
        let f64 = try Self.formula(width: 64, height: 48, alpha: false)
        XCTAssertEqual(try BlurHash.encode(f64, components: (4, 3)), "L$HVCL2S$2Sil@a%jwf4gZfmfNfl")
        XCTAssertEqual(try BlurHash.encode(f64, components: (1, 1)), "00HVCL")
        XCTAssertEqual(try BlurHash.encode(f64, components: (3, 7)), "u$HVCL2S$2l@a%jwgZfmfNnUa^jvfhfSfQoKa}jrf8fPfS")
        XCTAssertEqual(try BlurHash.encode(f64, components: (9, 9)),
                       "|$HVCL2S$2Sin~bFa}j@a{l@a%jwf4fSf8fPf8fRgZfmfNflfPfhfSfifQnUa^jvfPfOfSfOfRfQfhfSfQfOfSfOfSfPfPoKa}jrfSfOfSfPfPfRf8fPfSfOfSfPfPfRfOoda}jsfRfPfPfSfOfRe:fRfQfQfPfRfOfRfP")
        let f100 = try Self.formula(width: 100, height: 75, alpha: false)
        XCTAssertEqual(try BlurHash.encode(f100, components: (4, 3)), "L%HV9b2T$1Schkaxjvf9gYfSfTfS")
        XCTAssertEqual(try BlurHash.encode(f100, components: (3, 7)), "u%HV9b2T$1hkaxjvgYfSfTi_a~jvfzfSfOjZa~jqfPfRfO")
        // Premultiplied input gives the same hash (opaque: the same pixels).
        XCTAssertEqual(try BlurHash.encode(f100.converted(to: .rgba8Premultiplied), components: (4, 3)), "L%HV9b2T$1Schkaxjvf9gYfSfTfS")

        let suite = try Self.corpusPNG("pngsuite_f00n2c08.png")
        XCTAssertEqual(try BlurHash.encode(suite, components: (4, 3)), "L~HyZ;QnkXbE},WFaxe::totWYjZ")
        XCTAssertEqual(try BlurHash.encode(suite, components: (9, 9)),
                       "|~HyZ;QnkXbERRkVaejbbX},WFaxe:WXjsa#j?a}:totWYjZbae=f$kBafwirYX5kBoJfRfQj@aza1n,f6jsofj?azazfkWGadj[jboJkBayahj?j@ahoKjaf6j@f8f6kBoMbFoLjsa#e;jZkBj@ofjGk9j[WCazoekAaf")
        // A full-size photograph (768 × 512).
        let kodak = try Self.corpusPNG("kodak_23.png", folder: "photos")
        XCTAssertEqual(try BlurHash.encode(kodak, components: (4, 3)), "LFF=X1uJ0L8yxeEMXj-OEMvzx[OY")
    }

    func testBlurHashDecodeMatchesTheReferenceDecoder() throws {
        let expected: [UInt8] = [38, 67, 0, 56, 65, 0, 81, 62, 0, 101, 60, 0, 125, 62, 47, 160, 63, 60, 199, 62, 41, 230, 57, 0,
                                 35, 60, 0, 54, 59, 0, 80, 56, 0, 101, 55, 14, 124, 56, 63, 159, 57, 79, 199, 56, 78, 230, 53, 65,
                                 25, 70, 6, 48, 70, 12, 77, 70, 34, 99, 70, 65, 123, 70, 93, 158, 70, 113, 198, 70, 124, 228, 70, 128,
                                 0, 122, 64, 40, 122, 63, 73, 122, 68, 96, 122, 92, 121, 122, 121, 156, 122, 143, 196, 122, 154, 227, 122, 156,
                                 0, 180, 79, 29, 179, 74, 69, 178, 77, 93, 178, 107, 119, 178, 142, 154, 179, 164, 194, 178, 166, 225, 177, 155,
                                 0, 222, 81, 17, 221, 73, 65, 219, 75, 91, 218, 113, 117, 219, 155, 153, 220, 176, 193, 219, 167, 224, 217, 136]
        let decoded = try BlurHash.decode("L$HVCL2S$2Sil@a%jwf4gZfmfNfl", width: 8, height: 6)
        XCTAssertEqual(decoded.width, 8)
        XCTAssertEqual(decoded.height, 6)
        let rgb = decoded.packedBytes.enumerated().filter { $0.offset % 4 != 3 }.map(\.element)
        XCTAssertEqual(rgb.count, expected.count)
        // The reference computes in single precision; one step of rounding apart at most.
        for (ours, theirs) in zip(rgb, expected) { XCTAssertLessThanOrEqual(abs(Int(ours) - Int(theirs)), 1) }
        XCTAssertTrue(decoded.isOpaque)
    }

    func testBlurHashRejectsBadInputWithTypedErrors() throws {
        let image = try Self.formula(width: 8, height: 8, alpha: false)
        XCTAssertThrowsError(try BlurHash.encode(image, components: (0, 3))) {
            XCTAssertEqual($0 as? PlaceholderHashError, .invalidComponents(x: 0, y: 3))
        }
        XCTAssertThrowsError(try BlurHash.encode(image, components: (4, 10)))
        for bad in ["", "00HVC", "L$HVCL2S$2Sil@a%jwf4gZfmfNf", "L$HVCL2S$2Sil@a%jwf4gZfmfNflx", "L$HVCL2S$2Sil@a%jwf4gZfmfN\u{e9}",
                    "00~~~~", "0 HVCL"] {
            XCTAssertThrowsError(try BlurHash.decode(bad, width: 4, height: 4), bad) { error in
                guard case .malformedHash = error as? PlaceholderHashError else { return XCTFail("\(bad): \(error)") }
            }
        }
        XCTAssertThrowsError(try BlurHash.decode("00HVCL", width: 0, height: 4))
        XCTAssertThrowsError(try BlurHash.decode("00HVCL", width: Int.max, height: 2))
        // One component decodes to a flat colour: the DC.
        let flat = try BlurHash.decode("00HVCL", width: 3, height: 2)
        XCTAssertEqual(Set(flat.packedBytes.chunks4()).count, 1)
    }

    // MARK: ThumbHash

    func testThumbHashMatchesTheReference() throws {
        let cases: [(PixelBuffer, [UInt8])] = [
            (try Self.formula(width: 100, height: 75, alpha: false),
             [221, 8, 14, 29, 154, 96, 118, 119, 112, 136, 136, 134, 136, 103, 136, 135, 241, 177, 15, 248, 119]),
            (try Self.formula(width: 60, height: 100, alpha: true),
             [100, 121, 134, 19, 12, 71, 181, 192, 104, 88, 105, 227, 208, 95, 252, 115, 128, 136, 120, 136, 120, 136, 136]),
            (try Self.corpusPNG("pngsuite_f00n2c08.png"),
             [26, 185, 17, 111, 20, 160, 102, 120, 143, 119, 119, 137, 135, 136, 119, 88, 120, 120, 167, 247, 87, 124, 127, 15]),
            (try Self.corpusPNG("vips_trans-x.png"),
             [0, 8, 130, 5, 0, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 198, 119, 136, 113, 141, 152]),
        ]
        for (image, expected) in cases {
            XCTAssertEqual(try ThumbHash.encode(image), expected, "\(image.width)×\(image.height)")
        }
        XCTAssertEqual(Data(cases[0].1).base64EncodedString(), "3QgOHZpgdndwiIiGiGeIh/GxD/h3")
    }

    func testThumbHashDecodeMatchesTheReference() throws {
        let hash: [UInt8] = [100, 121, 134, 19, 12, 71, 181, 192, 104, 88, 105, 227, 208, 95, 252, 115, 128, 136, 120, 136, 120, 136, 136]
        let decoded = try ThumbHash.decode(hash)
        XCTAssertEqual(decoded.width, 19)
        XCTAssertEqual(decoded.height, 32)
        let expected = [UInt8](Data(base64Encoded: Self.referenceDecode)!)
        let ours = decoded.packedBytes
        XCTAssertEqual(ours.count, expected.count)
        var worst = 0
        for (a, b) in zip(ours, expected) { worst = max(worst, abs(Int(a) - Int(b))) }
        XCTAssertEqual(worst, 0, "the same arithmetic in double precision gives the same bytes")
        let average = try ThumbHash.averageColor(hash)
        XCTAssertEqual(average.r, 0.7486772486772486, accuracy: 1e-12)
        XCTAssertEqual(average.a, 0.4666666666666667, accuracy: 1e-12)
    }

    func testThumbHashRejectsBadInputWithTypedErrors() throws {
        XCTAssertThrowsError(try ThumbHash.encode(try Self.formula(width: 101, height: 10, alpha: false))) {
            XCTAssertEqual($0 as? PlaceholderHashError, .invalidImageSize(width: 101, height: 10))
        }
        XCTAssertNoThrow(try ThumbHash.encode(try Self.formula(width: 100, height: 100, alpha: false)))
        XCTAssertNoThrow(try ThumbHash.encode(try Self.formula(width: 2, height: 2, alpha: false)))
        let good: [UInt8] = [221, 8, 14, 29, 154, 96, 118, 119, 112, 136, 136, 134, 136, 103, 136, 135, 241, 177, 15, 248, 119]
        for length in 0..<good.count {
            XCTAssertThrowsError(try ThumbHash.decode(Array(good.prefix(length))), "\(length) bytes")
        }
        // Hostile headers (every bit set, zero sizes) decode or throw, never trap.
        for header: [UInt8] in [[255, 255, 255, 255, 255, 255] + [UInt8](repeating: 255, count: 40), [0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 40)] {
            _ = try? ThumbHash.decode(header)
        }
    }

    // MARK: Image

    func testImagePlaceholdersScaleLargeFramesAndFollowOrientation() throws {
        let kodak = try Self.corpusPNG("kodak_23.png", folder: "photos")
        let image = Image(buffer: kodak)
        let hash = try image.blurHash()
        XCTAssertEqual(hash.count, 28)
        // Scaled to 100 px first: the same hash as the full frame to within a quantisation step of each component.
        let full = "LFF=X1uJ0L8yxeEMXj-OEMvzx[OY"
        XCTAssertEqual(hash.prefix(2), full.prefix(2))
        let thumb = try image.thumbHash()
        XCTAssertEqual(thumb, try ThumbHash.encode(try kodak.resized(maxPixelSize: 100)))
        // A rotated image's hash describes the displayed (portrait) picture.
        let rotated = Image(buffer: kodak, orientation: .right)
        let portrait = try ThumbHash.decode(try rotated.thumbHash())
        XCTAssertLessThan(portrait.width, portrait.height)
        XCTAssertThrowsError(try image.blurHash(components: (x: 10, y: 1)))
    }

    static let referenceDecode = "zGtbP8lrWzjDaVwtvGdcI7NlXB6rYVwio11cMZ5YXEmcU1tnnk1aiKJGWaiqQFfGtTlW38IzVPbPLVL/2yhQ/+YkT//tIU7/8SBN/81sXTvKa101xGpdKrxoXSC0ZV0bq2JeH6ReXi6fWV1HnVRdZZ5OXIajSFumq0FZw7Y6V93DNFbz0C9U/9wqUv/nJlH/7iNQ//IiT//ObV81y2xfLsVrXyS+aWAatWdgFq1kYBulYGAqoFtgQp5WYGGgUF+CpUpeoq1EXL+4PlvZxTdZ79IyV//eLVb/6SlU//EnVP/1JVP/z29iLMxuYybGbWMcv2tjErdpZA+uZmQUp2JkJKJeZD2gWWRcolRjfadOYp2wSGG6u0Jg08c8XunUN1z84TJb/+wuWv/zLFn/9ypY/9BwZyLNcGccyG9nEsBtaAm4a2gHsGlpDallaR2kYWk3o11pVqRYaXeqUmiXsk1ns71HZczKQWTi1zxi9eQ4Yf/vNGD/9jJf//sxXv/RcmsXz3JrEclxbAjCb2wAum5tALJrbgWraG4WpmVvMKVhb1CnXG5xrFdukbVSba3ATWvFzUdq29pDae3nPmf+8jtm//o5Zv/+OGX/0nNwDc9zcAfKcnAAw3FxALtwcgCzbnMArGtzEahodCumZXRLqWF0bK5cdIu3V3OnwlJyv89OcdTdSW/m6kVu9/RCbf/8QGz//z9s/9N0dATQdHQAynR1AMNzdgC7cnYAtHB3AK1ueAypbHknqGl5R6pleWiwYXmHuF14osRYeLrRVHfO31B14OxMdPD2SXP+/kdz//9Gcv/SdXcAz3V4AMp0eADDdHkAu3N6ALRyfACtcX0KqW59JqhsfkaqaX5msGV+hblhfZ/FXX220lp8yeBWe9rsUnrq91B59/9OeP//TXj/0XV6AM51ewDJdXwAwnV9ALp0fgCzc38ArXKAC6hxgSanb4JGqmyCZrBpgoS5ZoGexGKBtNJfgMbfW3/W7Fh+5vdWffP/VHz9/1N8/891fQDNdX0AyHV+AMF1fwC5dYAAsXSBAKt0gw2nc4QppnGESahvhWiubYWFt2qEnsNnhLPQY4PE3mCC1OtegeL2W4Dv/lp/+f9Zf/7NdH4Ay3R/AMV0fwC/dYAAt3WCAK91gwCpdYQSpXSFLaRzhk2mcoZsrG+GiLVthqDBaoWzzmiFxNxlhNPoY4Ph82GC7ftfgfb/XoH8y3N/AMhzfwDDdIAAvHSBALR1ggCtdYQCp3aFF6J2hjOhdYdSpHSHcKlyh4yycIeivm6GtctshcTYaYTS5WeD4PBlguv4ZIH1/GOB+slzfwDGc4AAwXSAALp0gQCydYMAqnaECaR3hR6gd4Y6n3eHWKF2h3WmdYeQr3OHpbpyhrbHb4XF1W2E0uFrgt/saoHq9GmB8/hogPjHc38DxHOAAL90gAC4dYEAsHaDAqh3hA+heIUlnXmGQJx5hl6eeYd6o3iGk6x3hqe3dYW4xHOExdFygtLdcIHe6G6A6fBtf/L0bX/3xXN/B8J0fwW9dYACtnaBAq53ggimeYMWn3qEK5t7hUaZfIZim3yGfqB7hZape4SptHmDuMB4gsXNdoHR2nV/3eRzfujsc33x8HJ99sR1fgvBdX8JvHZ/BrV4gAeseYENpHuDG559hDCZfoRKl3+FZpmAhIGegISYpn+DqrF+gri9fYDEynx/0NZ6fdvgeXzm6Hh77+x4evTDd34NwHd+C7t4fwm0eoAKrHyBEKR+gh6dgIMzmIKDTZaDg2iXhIOCnISCmKSEgamvhIC3u4N+wseCfM3TgXvZ3oB55OV/eO3pfnjyw3l9DsF6fgy7e34LtH1/C6x/gBKjgoEgnISCNZeGgk6ViIJplomCgpuKgZejioCnrYp+tLmJfMDFiXrL0Yh51tuHd+Hjhnbq5oZ18MR9fA7BfX0MvH99CrSBfgysg38SpIaAIJ2JgTWXi4FOlY6BaJaPgYCbkICUopF+pKyRfLG4kXq8xJB4yNCPd9Paj3Xf4Y506OWOc+7FgHsMwoF8Cr2DfAm1hX0KrYh+EaSLfx+djoAzmJGATJaUgGaWln9+m5d+kaKYfaGsmXuuuJh5ucSYd8XPmHXR2Zdz3eCXcufklnHsxoR6CcOFewi+h3sGtol8CK6NfQ+lkH4dnpN+MZmXf0qWmn9jl5x+e5uefY6joHueraB5qrihd7bEoXXC0KBzz9mgcdzgoHDm5J9v7MeIeQbEiXkEv4t6A7eOegWvkXsMp5V8G5+ZfS+anX1Hl6B9YJijfHecpXuLpKd6m62oeKi5qXa0xalzwdCpcc7aqXDc4alu5uWpbu3IjHYCxY13AcCPdwC4kngCsJV5Cqiaehignnssm6J7RJmme16ZqXt1nax6iaWueJmusHamurF0s8aycsHRsnDP27Ju3eKybenmsmzvyY90AMaQdADAknUAuZV2ALGZdweonngWoaN5KpyneUKZq3lcmq95c56zeIemtXaXr7d0pbu5crPHuXDC0rpu0dy6bODjumvs57pr88mRcQDGk3IAwZVyALmYcwCxnXUFqaJ2FKKndyidrHdBmrB3Wpu1d3KfuHaGp7x0l7C+c6a8wHG1yMFvxNPBbdXdwmvl5MJq8ejCafjJk24AxpVvAMGXbwC5m3AAsZ9yBKmlcxOiqnQona91QJu1dVqcuXVyoL50h6fBc5ixxHGovcZvt8nHbcjUyGvZ3slp6uXJaPfpyWj/yZVrAMaWbADAmWwAuZ1uALGhbwOpp3ASoq1xJ52zckCbuHNanL1zc6DCcoioxnGasslvqr7LbbvKzWvM1c5p3t/PaPDmz2f+6s9m/8iWaADFl2kAwJpqALmeawCxo2wDqaluEqKvbyidtXBBm7txW5zAcXShxXCJqMlvnLLNba2+z2y+ytFq0NbSaOTg02b259Rl/+rUZf/HlmYAxZhmAL+bZwC4n2kAsKRqA6iqbBOisG0onbduQZu9b1ycwm91ochui6nMbZ6z0GywvtJqwcvUadTW1mfo4Ndl++fYZP/r2GT/x5dkAMSYZQC/m2YAuJ9nALClaQOoq2oTobFsKZ24bUKbvm5dnMRudqHJbYypzmygs9Frsr/UacTL12jX1thm6+DZZf7o2mP/69pj/8eXYwDEmGQAv5tlALigZgCwpWgEqKtqE6GyaymduGxCm79tXZzFbXahym2Nqc9sobPSa7O/1WnFy9hn2dfZZu3h22T/6Ntj/+vcYv8="
}

private extension Array where Element == UInt8 {
    /// The pixels as 32-bit values (for counting distinct colours).
    func chunks4() -> [UInt32] {
        stride(from: 0, to: count - 3, by: 4).map { UInt32(self[$0]) << 24 | UInt32(self[$0 + 1]) << 16 | UInt32(self[$0 + 2]) << 8 | UInt32(self[$0 + 3]) }
    }
}
