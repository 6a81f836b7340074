import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Corpus access and hostile-input helpers shared by the GIF and WebP tests.
enum GIFWebPCorpus {
    /// The manifest rows of `format` (`gif` or `webp`); skips the test when the corpus is absent.
    static func entries(format: String) throws -> [Corpus.Entry] {
        do {
            return try Corpus.entries().filter { $0.format == format }
        } catch let missing as Corpus.Missing {
            throw XCTSkip(missing.description)
        }
    }

    /// Decodes `data` with every frame composited; returns `nil` when the decoder threw an `ImageCodecError`.
    /// Any other error fails the test (decoders must only throw their typed error).
    static func decodeAllFrames(_ data: Data, options: DecodeOptions = DecodeOptions(),
                                file: StaticString = #filePath, line: UInt = #line) -> Image? {
        do {
            let image = try ImageDecoder.decode(data, options: options)
            _ = try image.allFrames()
            return image
        } catch is ImageCodecError {
            return nil
        } catch {
            XCTFail("unexpected error type \(type(of: error)): \(error)", file: file, line: line)
            return nil
        }
    }

    /// Truncations at 10 offsets spread over the file plus `flips` copies with a few random bytes changed.
    static func hostileVariants(of data: Data, flips: Int, seed: UInt64) -> [Data] {
        var variants: [Data] = []
        for i in 0..<10 {
            let cut = data.count * i / 10 + (i == 0 ? 1 : 0)
            if cut < data.count { variants.append(data.prefix(cut)) }
        }
        var rng = SplitMix64(seed: seed)
        for _ in 0..<flips {
            var copy = data
            let changes = 1 + Int(rng.next() % 8)
            for _ in 0..<changes {
                let at = Int(rng.next() % UInt64(copy.count))
                copy[copy.startIndex + at] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255)
            }
            variants.append(copy)
        }
        return variants
    }

    /// Compares our straight-alpha pixels with a reference raster: alpha everywhere, RGB where alpha > 0.
    /// Returns the largest channel difference.
    static func maxDifference(_ buffer: PixelBuffer, _ reference: ReferenceDecoder.Raster) -> Int {
        let ours = buffer.converted(to: .rgba8).packedBytes
        var worst = 0
        for p in 0..<(ours.count / 4) {
            let o = p * 4
            worst = max(worst, abs(Int(ours[o + 3]) - Int(reference.rgba[o + 3])))
            guard ours[o + 3] > 0 || reference.rgba[o + 3] > 0 else { continue }
            for c in 0..<3 { worst = max(worst, abs(Int(ours[o + c]) - Int(reference.rgba[o + c]))) }
        }
        return worst
    }
}

/// A small deterministic random generator (SplitMix64) so hostile variants are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
