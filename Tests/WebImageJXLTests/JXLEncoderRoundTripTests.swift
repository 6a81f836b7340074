import Foundation
import ImageCodec
import TestSupport
import WebImageJXL
import XCTest

/// `JXLEncoder`'s output read back by libjxl's own `djxl` (PNG/APNG) and `jxlinfo`: sizes, alpha, lossless pixels,
/// frames, durations, loop count; lossless JPEG recompression given back bit for bit; extreme sizes; the deadline.
final class JXLEncoderRoundTripTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        guard ReferenceDecoder.path(of: "djxl") != nil else { throw XCTSkip("djxl not installed (libjxl-tools)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("jxl-roundtrip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try FileManager.default.removeItem(at: directory) }
    }

    private func frame(width: Int, height: Int, seed: Int = 0, alpha: Bool = false) throws -> PixelBuffer {
        try GradientFrame.make(width: width, height: height, seed: seed, alpha: alpha)
    }

    /// `data` written to a file and decoded by `djxl` to `ext` (png: PNG or APNG; jpg: the reconstructed JPEG).
    private func djxl(_ data: Data, to ext: String = "png") throws -> Data {
        let input = directory.appendingPathComponent("in-\(UUID().uuidString).jxl")
        let output = directory.appendingPathComponent("out-\(UUID().uuidString).\(ext)")
        try data.write(to: input)
        _ = try ReferenceDecoder.run("djxl", [input.path, output.path, "--num_threads=1"])
        return try Data(contentsOf: output)
    }

    private func encode(_ frames: [ImageFrame], loopCount: Int = 0, options: EncodeOptions = EncodeOptions(quality: 0.8)) throws -> Data {
        try JXLEncoder().encode(frames, format: .jpegXL, loopCount: loopCount, options: options)
    }

    func testStillWithAlphaRoundTripsThroughDjxl() throws {
        let source = try frame(width: 64, height: 48, alpha: true)
        let data = try encode([ImageFrame(buffer: source, duration: 0)])
        XCTAssertEqual(ImageFormat.sniff(data), .jpegXL)
        let decoded = try ImageDecoder.decode(try djxl(data), options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        XCTAssertEqual([decoded.width, decoded.height], [64, 48])
        XCTAssertGreaterThan(decoded.pixel(x: 0, y: 24).a, 240, "opaque on the left")
        XCTAssertLessThan(decoded.pixel(x: 63, y: 24).a, 15, "transparent on the right")
        let left = try decoded.cropped(x: 0, y: 0, width: 24, height: 48), sourceLeft = try source.cropped(x: 0, y: 0, width: 24, height: 48)
        XCTAssertLessThanOrEqual(ModernCodecChecks.meanDifference(left, sourceLeft) ?? .infinity, 8)
    }

    func testLosslessKeepsEveryPixel() throws {
        let source = try frame(width: 37, height: 23, seed: 3, alpha: true)
        let data = try encode([ImageFrame(buffer: source, duration: 0)], options: EncodeOptions(isLossless: true))
        let decoded = try ImageDecoder.decode(try djxl(data), options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        XCTAssertEqual(ModernCodecChecks.maxDifference(decoded, reference: source), 0)
        let opaque = try frame(width: 20, height: 20, seed: 1)
        let opaqueData = try encode([ImageFrame(buffer: opaque, duration: 0)], options: EncodeOptions(isLossless: true))
        let info = String(decoding: try ReferenceDecoder.run("jxlinfo", [try write(opaqueData).path]), as: UTF8.self)
        XCTAssertTrue(info.contains("lossless") && info.contains("RGB") && !info.contains("RGBA"), info)
    }

    func testAnimationKeepsFramesDurationsAndLoopCount() throws {
        let durations = [0.1, 0.25, 0.05]
        let frames = try durations.enumerated().map { ImageFrame(buffer: try frame(width: 40, height: 30, seed: $0.offset), duration: $0.element) }
        let data = try encode(frames, loopCount: 3)
        let info = String(decoding: try ReferenceDecoder.run("jxlinfo", [try write(data).path]), as: UTF8.self)
        XCTAssertTrue(info.contains("JPEG XL animation, 40x30"), info)
        let lines = info.split(separator: "\n").filter { $0.hasPrefix("frame:") }
        XCTAssertEqual(lines.map { $0.components(separatedBy: "duration: ").last ?? "" }, ["100.0 ms", "250.0 ms", "50.0 ms"], info)
        // djxl writes the animation as an APNG: its frames, durations and plays, read by the built-in decoder.
        let apng = try ImageDecoder.decode(try djxl(data), options: DecodeOptions(pixelFormat: .rgba8))
        XCTAssertEqual(apng.frameCount, 3)
        XCTAssertEqual(apng.loopCount, 3)
        for (index, duration) in durations.enumerated() {
            XCTAssertEqual(apng.duration(at: index), duration, accuracy: 0.002)
            XCTAssertLessThanOrEqual(ModernCodecChecks.meanDifference(try apng.frame(at: index).buffer, frames[index].buffer) ?? .infinity, 6)
        }
    }

    func testJPEGRecompressionGivesTheSameFileBack() throws {
        let root: URL
        do { root = try Corpus.require() } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        let photos = root.appendingPathComponent("photos")
        let jpeg = try Data(contentsOf: photos.appendingPathComponent("thumbor_800px-Katherine_Maher.jpg"))
        let data = try JXLEncoder.recompressJPEG(jpeg)
        XCTAssertEqual(ImageFormat.sniff(data), .jpegXL)
        XCTAssertLessThan(data.count, jpeg.count, "smaller, losslessly")
        XCTAssertEqual(try djxl(data, to: "jpg"), jpeg, "djxl reconstructs the original JPEG, bit for bit")
        XCTAssertThrowsError(try JXLEncoder.recompressJPEG(Data(jpeg.prefix(200)))) {
            guard case .encodingFailed = $0 as? ImageCodecError else { return XCTFail("\($0)") }
        }
    }

    func testExtremeSizes() throws {
        for (width, height) in [(1, 1), (16383, 1), (1, 300)] {
            let data = try encode([ImageFrame(buffer: try frame(width: width, height: height), duration: 0)])
            let decoded = try ImageDecoder.decode(try djxl(data))
            XCTAssertEqual([decoded.width, decoded.height], [width, height])
        }
        XCTAssertThrowsError(try encode([])) {
            guard case .encodingFailed = $0 as? ImageCodecError else { return XCTFail("\($0)") }
        }
        let mixed = [ImageFrame(buffer: try frame(width: 4, height: 4), duration: 0.1), ImageFrame(buffer: try frame(width: 5, height: 4), duration: 0.1)]
        XCTAssertThrowsError(try encode(mixed)) {
            guard case .encodingFailed = $0 as? ImageCodecError else { return XCTFail("\($0)") }
        }
    }

    func testAThousandFrames() throws {
        let frames = try (0..<1000).map { ImageFrame(buffer: try frame(width: 8, height: 8, seed: $0 % 7), duration: 0.02) }
        let data = try encode(frames)
        let info = String(decoding: try ReferenceDecoder.run("jxlinfo", [try write(data).path]), as: UTF8.self)
        XCTAssertEqual(info.split(separator: "\n").filter { $0.hasPrefix("frame:") }.count, 1000)
        XCTAssertEqual(try JXLDecoder().info(data).frameCount, 1000)
    }

    func testDeadlineStopsTheEncode() throws {
        let frames = try (0..<3).map { ImageFrame(buffer: try frame(width: 32, height: 32, seed: $0), duration: 0.1) }
        let passed = ContinuousClock.now - .seconds(1)
        XCTAssertThrowsError(try encode(frames, options: EncodeOptions(deadline: passed))) {
            XCTAssertEqual($0 as? ImageCodecError, .deadlineExceeded(format: .jpegXL))
        }
        XCTAssertThrowsError(try JXLEncoder.recompressJPEG(Data([0xFF, 0xD8]), options: EncodeOptions(deadline: passed))) {
            XCTAssertEqual($0 as? ImageCodecError, .deadlineExceeded(format: .jpegXL))
        }
        XCTAssertNoThrow(try encode(frames, options: EncodeOptions(deadline: .now + .seconds(600))))
    }

    func testRegisteredEncoderWritesThroughImageEncoded() throws {
        let registrations = JXLCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        XCTAssertTrue(ImageCodecRegistry.shared.canEncode(.jpegXL, frameCount: 2))
        let image = Image(buffer: try frame(width: 30, height: 20).converted(to: .rgba8Premultiplied))
        let data = try image.encoded(as: .jpegXL, quality: 0.9)
        XCTAssertEqual(try ImageDecoder.decode(data).width, 30)
    }

    private func write(_ data: Data) throws -> URL {
        let url = directory.appendingPathComponent("\(UUID().uuidString).jxl")
        try data.write(to: url)
        return url
    }
}
