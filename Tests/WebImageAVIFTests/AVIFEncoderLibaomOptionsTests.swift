import Foundation
import ImageCodec
import TestSupport
@testable import WebImageAVIF
import XCTest

/// `AVIFEncoder.libaomOptions(for:)`: the default effort's options reach libaom (its output differs from the same
/// encode without them), keep pictures right (size, alpha, colour close to the source, read back by `avifdec`, the
/// reference decoder) for stills and sequences, and a key libaom refuses is a typed error, never a crash or a
/// silent default.
final class AVIFEncoderLibaomOptionsTests: XCTestCase {
    private func photoLike(width: Int, height: Int, alpha: Bool) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Int(state >> 60)
                let r = (x * 255 / max(1, width - 1) + noise) & 255
                let g = (y * 255 / max(1, height - 1) + noise) & 255
                let b = (128 + Int(90 * sin(Double(x) / 5) * cos(Double(y) / 7))) & 255
                let a = alpha ? 64 + (x + y) % 192 : 255
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(r), g: UInt8(g), b: UInt8(b), a: UInt8(a)))
            }
        }
        return buffer
    }

    /// `data` decoded by `avifdec` (libavif's reference tool) to PNG, read back by the built-in PNG decoder.
    private func avifdec(_ data: Data) throws -> PixelBuffer {
        guard ReferenceDecoder.path(of: "avifdec") != nil else { throw XCTSkip("avifdec not installed (libavif-bin)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-aomopt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.avif"), output = directory.appendingPathComponent("out.png")
        try data.write(to: input)
        _ = try ReferenceDecoder.run("avifdec", [input.path, output.path])
        return try ImageDecoder.decode(try Data(contentsOf: output), options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
    }

    private func requireEncoder() throws {
        guard AVIFCodec.isEncodingAvailable else {
            throw XCTSkip("this libavif has no AV1 encoder (\(AVIFCodec.codecVersions)): AVIF encoding is not offered")
        }
    }

    func testOnlyTheDefaultEffortSetsOptions() {
        XCTAssertEqual(AVIFEncoder.libaomOptions(for: .balanced).map(\.key),
                       ["use-intra-dct-only", "enable-cdef", "enable-smooth-intra", "enable-paeth-intra",
                        "enable-filter-intra", "enable-intra-edge-filter", "coeff-cost-upd-freq", "mode-cost-upd-freq"])
        XCTAssertTrue(AVIFEncoder.libaomOptions(for: .fast).isEmpty)
        XCTAssertTrue(AVIFEncoder.libaomOptions(for: .smallest).isEmpty)
    }

    func testTheOptionsReachLibaomAndKeepThePicture() throws {
        try requireEncoder()
        let encoder = AVIFEncoder()
        for alpha in [false, true] {
            let source = try photoLike(width: 160, height: 96, alpha: alpha)
            let frame = [ImageFrame(buffer: source)]
            let options = EncodeOptions(quality: 0.6)
            let trimmed = try encoder.encode(frame, format: .avif, loopCount: 0, options: options)
            let plain = try encoder.encode(frame, options: options, libaomOptions: [])
            XCTAssertNotEqual(trimmed, plain, "alpha \(alpha): libaom saw the options")
            // Both are pictures of the source: avifdec reads them, and they stay close to it.
            for data in [trimmed, plain] {
                let decoded = try avifdec(data)
                XCTAssertEqual([decoded.width, decoded.height], [160, 96])
                XCTAssertEqual(decoded.isOpaque, !alpha)
                let mean = try XCTUnwrap(ModernCodecChecks.meanDifference(decoded, source))
                XCTAssertLessThan(mean, 12, "alpha \(alpha): mean difference per channel")
            }
        }
    }

    func testASequenceEncodesWithTheOptions() throws {
        try requireEncoder()
        let frames = try (0..<3).map { ImageFrame(buffer: try photoLike(width: 64, height: 48, alpha: $0 == 1), duration: 0.1) }
        let data = try AVIFEncoder().encode(frames, format: .avif, loopCount: 0, options: EncodeOptions(quality: 0.7))
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        let decoded = try ImageDecoder.decode(data)
        XCTAssertEqual(decoded.frameCount, 3)
    }

    /// An option libaom does not know fails the encode with `.encodingFailed`, whatever libavif makes of it.
    func testAnOptionLibaomRefusesIsATypedError() throws {
        try requireEncoder()
        let frame = [ImageFrame(buffer: try photoLike(width: 32, height: 32, alpha: false))]
        for option in [("no-such-option", "1"), ("enable-cdef", "banana"), ("", ""), ("enable-cdef", "1\u{0}0")] {
            XCTAssertThrowsError(try AVIFEncoder().encode(frame, options: EncodeOptions(quality: 0.6), libaomOptions: [option]),
                                 "\(option)") { error in
                guard case .encodingFailed(.avif, _) = error as? ImageCodecError else { return XCTFail("\(option): \(error)") }
            }
        }
    }
}
