import Foundation
import ImageCodec
import TestSupport
@testable import WebImageAVIF
import XCTest

/// Review 27 (issue #32, AVIF output): what `AVIFEncoder` writes, read back by the SDK's decoder and looked for in
/// the file. (Held in the same review: 1×16383, 3×5, 1×1 and 2×1 with alpha through `avifdec`; a fully transparent
/// premultiplied still, lossy and lossless; a lossless 3×5 with alpha exact; alpha first appearing in frame 2; a
/// 16-frame 640×480 sequence stopping within 8 ms of its deadline.)
final class Review27AVIFOutputTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        guard AVIFCodec.isEncodingAvailable else { throw XCTSkip("this libavif has no AV1 encoder") }
        guard ReferenceDecoder.path(of: "avifdec") != nil else { throw XCTSkip("avifdec not installed (libavif-bin)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("review27-avif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The issue asks that loop counts round-trip. libavif 0.11 cannot write one (no `edts`/`elst`): every AVIF
    /// sequence `AVIFEncoder` writes loops forever, as its documentation says, and the server's `format=auto` writes
    /// an animation that stops as WebP or GIF instead (`Review27FormatOutputTests`). This holds the documented
    /// behaviour: when a libavif that writes an edit list is linked, it fails, and the loop count should be written.
    func testTheLoopCountIsNotWrittenAsDocumented() throws {
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        for loopCount in [1, 3, 65535] {
            var encoder = ImageEncoder(format: .avif, loopCount: loopCount, options: EncodeOptions(quality: 0.6))
            for seed in 0..<3 { encoder.addFrame(try GradientFrame.make(width: 24, height: 16, seed: seed), duration: 0.1) }
            let data = try encoder.encode()
            let decoded = try ImageDecoder.decode(data)
            XCTAssertEqual(decoded.frameCount, 3)
            XCTAssertEqual(decoded.loopCount, 0, "loopCount \(loopCount) read back as \(decoded.loopCount): an edit list was written")
            XCTAssertNil(data.range(of: Data("elst".utf8)), "an edit list was written (loopCount \(loopCount))")
        }
    }
}
