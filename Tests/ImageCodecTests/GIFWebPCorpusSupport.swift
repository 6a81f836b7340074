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


/// Synthetic test pictures.
enum GIFWebPTestImages {
    /// The RGB bytes of `buffer` (alpha dropped), for PSNR over colour only.
    static func rgb(_ buffer: PixelBuffer) -> [UInt8] {
        let bytes = buffer.packedBytes
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 4 * 3)
        for p in stride(from: 0, to: bytes.count, by: 4) { out.append(contentsOf: bytes[p..<p + 3]) }
        return out
    }

    /// A smooth photo-like picture: gradients, a soft disc and mild deterministic noise (thousands of colours).
    static func photoLike(width: Int, height: Int, seed: UInt64 = 7, alpha: Bool = false) throws -> PixelBuffer {
        var rng = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                let d = hypot(fx - 0.6, fy - 0.4)
                let disc = max(0, 1 - d * 3)
                let noise = Double(Int(rng.next() % 9) - 4)
                let o = (y * width + x) * 4
                bytes[o] = UInt8(clamping: Int(40 + 180 * fx + 30 * disc + noise))
                bytes[o + 1] = UInt8(clamping: Int(60 + 120 * fy + 60 * disc + noise))
                bytes[o + 2] = UInt8(clamping: Int(200 - 150 * fx * fy + noise))
                if alpha { bytes[o + 3] = UInt8(clamping: Int(255 * (1 - fx * 0.8))) }
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    /// A flat-colour picture with `colors` distinct opaque colours in stripes, and a transparent square
    /// (alpha 0, colour 0) when `transparentSquare`.
    static func indexed(width: Int, height: Int, colors: Int, shift: Int = 0, transparentSquare: Bool) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let o = (y * width + x) * 4
                if transparentSquare, x < width / 4, y < height / 4 { continue }
                let c = ((x + shift) / 2 + y * 3) % colors
                bytes[o] = UInt8(c * 37 % 256); bytes[o + 1] = UInt8(c * 91 % 256); bytes[o + 2] = UInt8(c * 13 % 256)
                bytes[o + 3] = 255
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }
}

extension GIFWebPCorpus {
    /// Every expected-OK corpus file of `format` decodes with the manifest's size, frame count and stored
    /// loop count, all its frames composite, and `info` agrees; `extraChecks` adds the format's own facts.
    static func assertExpectedOKFilesMatchManifest(
        format: String, imageFormat: ImageFormat,
        extraChecks: (Corpus.Entry, Image, ImageInfo) -> Void = { _, _, _ in }
    ) throws {
        let entries = try GIFWebPCorpus.entries(format: format).filter(\.isExpectedOK)
        XCTAssertFalse(entries.isEmpty)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let image: Image
            do {
                image = try ImageDecoder.decode(data)
            } catch {
                XCTFail("\(entry.path): \(error)")
                continue
            }
            XCTAssertEqual(image.format, imageFormat, entry.path)
            XCTAssertEqual(image.width, entry.width, entry.path)
            XCTAssertEqual(image.height, entry.height, entry.path)
            XCTAssertEqual(image.frameCount, entry.frameCount, entry.path)
            XCTAssertEqual(image.storedLoopCount, entry.loopCount, entry.path)
            XCTAssertNoThrow(try image.allFrames(), entry.path)
            let info = try ImageDecoder.info(data)
            XCTAssertEqual(info.width, entry.width, entry.path)
            XCTAssertEqual(info.height, entry.height, entry.path)
            XCTAssertEqual(info.frameCount, entry.frameCount, entry.path)
            XCTAssertEqual(info.storedLoopCount, entry.loopCount, entry.path)
            extraChecks(entry, image, info)
        }
    }

    /// Every corpus file of `format` the manifest marks `reject` throws an `ImageCodecError` when preloaded,
    /// and also when decoded lazily if `lazyDecodeThrows` (a lazy decode may only fail at the bad frame).
    static func assertRejectFilesThrowTypedErrors(format: String, lazyDecodeThrows: Bool) throws {
        let entries = try GIFWebPCorpus.entries(format: format).filter { $0.expected == "reject" }
        XCTAssertFalse(entries.isEmpty)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true)), entry.path) {
                XCTAssertTrue($0 is ImageCodecError, "\(entry.path): \($0)")
            }
            if lazyDecodeThrows { XCTAssertThrowsError(try ImageDecoder.decode(data), entry.path) }
        }
    }

    /// Every corpus file of `format`, truncated at 10 offsets and with random byte flips, decodes (preloaded
    /// and lazily) or throws an `ImageCodecError`, and `info` never throws anything else; some variants must
    /// decode and some must be rejected, so the check cannot pass vacuously.
    static func assertHostileVariantsDecodeOrThrow(format: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let entries = try GIFWebPCorpus.entries(format: format)
        var decoded = 0, rejected = 0
        for (n, entry) in entries.enumerated() {
            let data = try Data(contentsOf: entry.url)
            for variant in GIFWebPCorpus.hostileVariants(of: data, flips: 6, seed: UInt64(n + 1)) {
                if GIFWebPCorpus.decodeAllFrames(variant, options: DecodeOptions(preloadAllFrames: true)) != nil {
                    decoded += 1
                } else {
                    rejected += 1
                }
                _ = GIFWebPCorpus.decodeAllFrames(variant)
                do {
                    _ = try ImageDecoder.info(variant)
                } catch {
                    XCTAssertTrue(error is ImageCodecError, "info threw \(type(of: error)): \(error)", file: file, line: line)
                }
            }
        }
        XCTAssertGreaterThan(rejected, 0, file: file, line: line)
        XCTAssertGreaterThan(decoded, 0, file: file, line: line)
    }
}
