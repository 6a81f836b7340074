import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Corpus checks shared by the JPEG, PNG and APNG conformance tests.
enum JPEGPNGCorpusCheck {
    /// Manifest rows of `format`, or an `XCTSkip` when the corpus is absent.
    static func entries(format: String) throws -> [Corpus.Entry] {
        do {
            return try Corpus.entries().filter { $0.format == format }
        } catch let missing as Corpus.Missing {
            throw XCTSkip(missing.description)
        }
    }

    /// Checks one `expected=ok` row: header facts from `info` and a full decode.
    static func checkAccepted(_ entry: Corpus.Entry, file: StaticString = #filePath, line: UInt = #line) throws {
        let data = try Data(contentsOf: entry.url)
        let info: ImageInfo
        do { info = try ImageDecoder.info(data) } catch {
            XCTFail("\(entry.path): info failed: \(error)", file: file, line: line)
            return
        }
        XCTAssertEqual(info.width, entry.width, "\(entry.path) width", file: file, line: line)
        XCTAssertEqual(info.height, entry.height, "\(entry.path) height", file: file, line: line)
        if entry.isHuge {
            XCTAssertThrowsError(try ImageDecoder.decode(data), entry.path, file: file, line: line) { error in
                guard case ImageCodecError.limitExceeded = error else {
                    return XCTFail("\(entry.path): expected a limits error, got \(error)", file: file, line: line)
                }
            }
            return
        }
        let image: Image
        do { image = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true)) } catch {
            XCTFail("\(entry.path): decode failed: \(error)", file: file, line: line)
            return
        }
        XCTAssertEqual(image.width, entry.width, "\(entry.path) width", file: file, line: line)
        XCTAssertEqual(image.height, entry.height, "\(entry.path) height", file: file, line: line)
        if let frames = entry.frameCount {
            XCTAssertEqual(image.frameCount, frames, "\(entry.path) frames", file: file, line: line)
            XCTAssertEqual(info.frameCount, frames, "\(entry.path) info frames", file: file, line: line)
        }
        if let loop = entry.loopCount, image.frameCount > 1 {
            XCTAssertEqual(image.storedLoopCount, loop, "\(entry.path) loop", file: file, line: line)
            XCTAssertEqual(info.storedLoopCount, loop, "\(entry.path) info loop", file: file, line: line)
        }
        if let alpha = entry.hasAlpha {
            XCTAssertEqual(image.hasAlpha, alpha, "\(entry.path) has_alpha", file: file, line: line)
        }
        if let progressive = entry.isProgressiveOrInterlaced {
            XCTAssertEqual(image.isProgressive, progressive, "\(entry.path) progressive", file: file, line: line)
        }
        if entry.format == "jpeg" {
            // A stored value outside 1…8 (e.g. 0) counts as a tag that shows the image as stored.
            XCTAssertEqual(info.hasOrientationTag, entry.exifOrientation != nil, "\(entry.path) tag", file: file, line: line)
            XCTAssertEqual(info.orientation.rawValue, ImageOrientation(rawValue: entry.exifOrientation ?? 1)?.rawValue ?? 1,
                           "\(entry.path) orientation", file: file, line: line)
            XCTAssertEqual(image.orientation, info.orientation, "\(entry.path) orientation", file: file, line: line)
        }
        for i in 0..<image.frameCount {
            let frame = try image.frame(at: i)
            XCTAssertEqual(frame.buffer.width, image.width, file: file, line: line)
            XCTAssertEqual(frame.buffer.height, image.height, file: file, line: line)
        }
    }

    /// Checks one `expected=reject` row: decode throws an `ImageCodecError`.
    static func checkRejected(_ entry: Corpus.Entry, file: StaticString = #filePath, line: UInt = #line) throws {
        let data = try Data(contentsOf: entry.url)
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true)),
                             entry.path, file: file, line: line) { error in
            XCTAssertTrue(error is ImageCodecError, "\(entry.path): \(error)", file: file, line: line)
        }
    }

    /// Decodes `data` cut at 10 offsets and with random byte flips; only asserts that nothing crashes and that
    /// every failure is an `ImageCodecError`. Returns how many variants decoded.
    @discardableResult
    static func hostileVariants(of data: Data, seed: UInt64) -> (decoded: Int, failed: Int) {
        var generator = SplitMix64(seed: seed)
        var variants: [Data] = []
        for k in 1...10 { variants.append(data.prefix(data.count * k / 11)) }
        for _ in 0..<10 {
            var flipped = data
            let flips = 1 + Int(generator.next() % 8)
            for _ in 0..<flips where !flipped.isEmpty {
                let index = Int(generator.next() % UInt64(flipped.count))
                flipped[flipped.startIndex + index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            variants.append(flipped)
        }
        let options = DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 8_000_000, maxTotalPixels: 64_000_000,
                                                         maxFrameCount: 1_000), preloadAllFrames: true)
        var decoded = 0, failed = 0
        for variant in variants {
            do {
                let image = try ImageDecoder.decode(variant, options: options)
                _ = try image.allFrames()
                decoded += 1
            } catch {
                XCTAssertTrue(error is ImageCodecError, "unexpected error type \(type(of: error)): \(error)")
                failed += 1
            }
        }
        return (decoded, failed)
    }
}

