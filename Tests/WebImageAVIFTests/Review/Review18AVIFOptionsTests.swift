import Foundation
@testable import ImageCodec
import TestSupport
@testable import WebImageAVIF
import XCTest

/// Review 18: `AVIFEncoder.libaomOptions(for:)` at the edges: qualities whose quantizer is 0 (libaom lossless for the
/// colour plane while `isLossless` is false), alpha, 1-pixel sides, sequences; the options' output must decode to the
/// size and (within a small tolerance) the pixels of the same encode without them.
final class Review18AVIFOptionsTests: XCTestCase {
    private func picture(_ width: Int, _ height: Int, alpha: Bool) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        for y in 0..<height {
            for x in 0..<width {
                let a: UInt8 = alpha ? UInt8(40 + (x * 13 + y * 7) % 216) : 255
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8((x * 37) & 255), g: UInt8((y * 53) & 255),
                                                     b: UInt8((x * y) & 255), a: a))
            }
        }
        return buffer
    }

    private func decode(_ data: Data) throws -> PixelBuffer {
        try AVIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
    }

    private func maxDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
        var worst = 0
        for y in 0..<a.height { for x in 0..<a.width {
            let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
            worst = max(worst, abs(Int(p.r) - Int(q.r)), abs(Int(p.g) - Int(q.g)), abs(Int(p.b) - Int(q.b)), abs(Int(p.a) - Int(q.a)))
        } }
        return worst
    }

    func testEdgeQualitiesSizesAndAlphaMatchTheEncodeWithoutOptions() throws {
        guard AVIFCodec.isEncodingAvailable else { throw XCTSkip("no AV1 encoder") }
        let encoder = AVIFEncoder()
        for (w, h) in [(1, 1), (1, 19), (23, 1), (65, 33)] {
            for alpha in [false, true] {
                let source = try picture(w, h, alpha: alpha)
                for quality in [0.0, 0.5, 0.99, 1.0] {
                    let options = EncodeOptions(quality: quality, effort: .balanced)
                    let label = "\(w)×\(h) alpha \(alpha) q\(quality)"
                    let with = try encoder.encode([ImageFrame(buffer: source)], format: .avif, loopCount: 0, options: options)
                    let without = try encoder.encode([ImageFrame(buffer: source)], options: options, libaomOptions: [])
                    let a = try decode(with), b = try decode(without)
                    XCTAssertEqual(a.width, w, label); XCTAssertEqual(a.height, h, label)
                    guard a.width == b.width, a.height == b.height else { continue }
                    // Near-lossless qualities (quantizer 0: libaom lossless) must stay so with the options.
                    if quality >= 0.99 {
                        XCTAssertLessThanOrEqual(maxDifference(a, b), 4, label)
                        XCTAssertLessThanOrEqual(maxDifference(a, source), 6, label + " against the source")
                    }
                }
            }
        }
    }

    func testAnAnimatedSequenceWithAlphaAtEveryEffort() throws {
        guard AVIFCodec.isEncodingAvailable else { throw XCTSkip("no AV1 encoder") }
        let frames = try (0..<3).map { i in ImageFrame(buffer: try picture(31 + i * 0, 17, alpha: i != 1), duration: 0.1) }
        for effort in EncodeEffort.allCases {
            for quality in [0.3, 1.0] {
                let data = try AVIFEncoder().encode(frames, format: .avif, loopCount: 0,
                                                    options: EncodeOptions(quality: quality, effort: effort))
                let image = try AVIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8, preloadAllFrames: true))
                XCTAssertEqual(image.frameCount, 3, "\(effort) q\(quality)")
                XCTAssertEqual(image.width, 31)
            }
        }
    }

    /// `libaomOptions(for:)`'s doc says coefficient and mode costs are "updated once a tile instead of per
    /// superblock"; libaom's values for `coeff-cost-upd-freq` / `mode-cost-upd-freq` are 0 SB, 1 SB row per tile,
    /// 2 tile, 3 off (aomenc's help text). The shipped "3" must then encode as the documented "2" does.
    func testCostUpdatesOffAndOncePerTileEncodeAlike() throws {
        guard AVIFCodec.isEncodingAvailable else { throw XCTSkip("no AV1 encoder") }
        let shipped = AVIFEncoder.libaomOptions(for: .balanced)
        let documented = shipped.map { option -> (key: String, value: String) in
            option.key.hasSuffix("-cost-upd-freq") ? (option.key, "2") : option
        }
        var differing: [String] = []
        for (w, h) in [(160, 96), (400, 300)] {
            let source = try picture(w, h, alpha: false)
            for quality in [0.3, 0.6, 0.85] {
                let options = EncodeOptions(quality: quality, effort: .balanced)
                let a = try AVIFEncoder().encode([ImageFrame(buffer: source)], options: options, libaomOptions: shipped)
                let b = try AVIFEncoder().encode([ImageFrame(buffer: source)], options: options, libaomOptions: documented)
                if a != b { differing.append("\(w)×\(h) q\(quality): \(a.count) bytes shipped, \(b.count) documented") }
            }
        }
        XCTAssertEqual(differing, [], "the shipped cost-update setting is not the documented once-a-tile one")
    }
}
