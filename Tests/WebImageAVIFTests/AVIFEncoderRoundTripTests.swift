import Foundation
import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// `AVIFEncoder`'s output read back by libavif's own `avifdec` (its PNG, and `--info` for sequences): sizes, alpha,
/// frames, durations; extreme sizes; the deadline.
final class AVIFEncoderRoundTripTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        guard AVIFCodec.isEncodingAvailable else {
            throw XCTSkip("this libavif has no AV1 encoder (\(AVIFCodec.codecVersions)): AVIF encoding is not offered")
        }
        guard ReferenceDecoder.path(of: "avifdec") != nil else { throw XCTSkip("avifdec not installed (libavif-bin)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("avif-roundtrip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try FileManager.default.removeItem(at: directory) }
    }

    private func frame(width: Int, height: Int, seed: Int = 0, alpha: Bool = false) throws -> PixelBuffer {
        try GradientFrame.make(width: width, height: height, seed: seed, alpha: alpha)
    }

    /// `data` written to a file and decoded by `avifdec` to PNG, read back by the built-in PNG decoder.
    private func avifdec(_ data: Data, index: Int = 0) throws -> Image {
        let input = directory.appendingPathComponent("in-\(UUID().uuidString).avif")
        let output = directory.appendingPathComponent("out-\(UUID().uuidString).png")
        try data.write(to: input)
        _ = try ReferenceDecoder.run("avifdec", ["--index", String(index), input.path, output.path])
        return try ImageDecoder.decode(try Data(contentsOf: output), options: DecodeOptions(pixelFormat: .rgba8))
    }

    /// `avifdec --info`'s lines for `data`.
    private func avifInfo(_ data: Data) throws -> String {
        let input = directory.appendingPathComponent("info-\(UUID().uuidString).avif")
        try data.write(to: input)
        return String(decoding: try ReferenceDecoder.run("avifdec", ["--info", input.path]), as: UTF8.self)
    }

    func testStillWithAlphaRoundTripsThroughAvifdec() throws {
        let source = try frame(width: 64, height: 48, alpha: true)
        let data = try AVIFEncoder().encode([ImageFrame(buffer: source, duration: 0)], format: .avif, loopCount: 0,
                                            options: EncodeOptions(quality: 0.8))
        let decoded = try avifdec(data)
        XCTAssertEqual([decoded.width, decoded.height], [64, 48])
        let buffer = decoded.firstFrame.buffer
        XCTAssertGreaterThan(buffer.pixel(x: 0, y: 24).a, 240, "opaque on the left")
        XCTAssertLessThan(buffer.pixel(x: 63, y: 24).a, 15, "transparent on the right")
        XCTAssertEqual(Double(buffer.pixel(x: 32, y: 24).a), 127, accuracy: 20)
        // Colour where the pixels are visible (the left half); libavif keeps alpha straight, as given.
        let left = try buffer.cropped(x: 0, y: 0, width: 24, height: 48), sourceLeft = try source.cropped(x: 0, y: 0, width: 24, height: 48)
        XCTAssertLessThanOrEqual(ModernCodecChecks.meanDifference(left, sourceLeft) ?? .infinity, 8)
        XCTAssertTrue(try avifInfo(data).contains("Alpha          : Not premultiplied"))
    }

    func testSequenceKeepsFramesAndDurations() throws {
        let durations = [0.1, 0.25, 0.05]
        let frames = try durations.enumerated().map { ImageFrame(buffer: try frame(width: 40, height: 30, seed: $0.offset), duration: $0.element) }
        let data = try AVIFEncoder().encode(frames, format: .avif, loopCount: 0, options: EncodeOptions(quality: 0.8))
        let info = try avifInfo(data)
        XCTAssertTrue(info.contains("3 frames"), info)
        let frameLines = info.split(separator: "\n").filter { $0.contains("Decoded frame [") }
        XCTAssertEqual(frameLines.count, 3, info)
        for (line, duration) in zip(frameLines, durations) {
            XCTAssertTrue(line.contains("[duration") && line.contains("(\(Int((duration * 1000).rounded())) timescales)] [40x30]"), String(line))
        }
        XCTAssertTrue(info.contains("1000 timescales per second"), info)
        // Each frame's own pixels (the seed moves red and blue), not the first one's.
        for index in 0..<3 {
            let decoded = try avifdec(data, index: index).firstFrame.buffer
            XCTAssertLessThanOrEqual(ModernCodecChecks.meanDifference(decoded, try frame(width: 40, height: 30, seed: index)) ?? .infinity, 6)
        }
    }

    func testExtremeSizes() throws {
        for (width, height) in [(1, 1), (16383, 1), (1, 300)] {
            let data = try AVIFEncoder().encode([ImageFrame(buffer: try frame(width: width, height: height), duration: 0)],
                                                format: .avif, loopCount: 0, options: EncodeOptions(quality: 0.8))
            let decoded = try avifdec(data)
            XCTAssertEqual([decoded.width, decoded.height], [width, height])
        }
        XCTAssertThrowsError(try AVIFEncoder().encode([], format: .avif, loopCount: 0, options: EncodeOptions())) {
            guard case .encodingFailed = $0 as? ImageCodecError else { return XCTFail("\($0)") }
        }
    }

    func testAThousandFrames() throws {
        let frames = try (0..<1000).map { ImageFrame(buffer: try frame(width: 8, height: 8, seed: $0 % 7), duration: 0.02) }
        let data = try AVIFEncoder().encode(frames, format: .avif, loopCount: 0, options: EncodeOptions(quality: 0.5))
        XCTAssertTrue(try avifInfo(data).contains("1000 frames"))
        let ours = try AVIFDecoder().info(data)
        XCTAssertEqual(ours.frameCount, 1000)
    }

    func testDeadlineStopsTheEncodeBeforeTheNextFrame() throws {
        let frames = try (0..<3).map { ImageFrame(buffer: try frame(width: 32, height: 32, seed: $0), duration: 0.1) }
        let passed = ContinuousClock.now - .seconds(1)
        XCTAssertThrowsError(try AVIFEncoder().encode(frames, format: .avif, loopCount: 0, options: EncodeOptions(deadline: passed))) {
            XCTAssertEqual($0 as? ImageCodecError, .deadlineExceeded(format: .avif))
        }
        // A deadline in the future changes nothing.
        let later = ContinuousClock.now + .seconds(600)
        XCTAssertNoThrow(try AVIFEncoder().encode(frames, format: .avif, loopCount: 0, options: EncodeOptions(deadline: later)))
    }
}
