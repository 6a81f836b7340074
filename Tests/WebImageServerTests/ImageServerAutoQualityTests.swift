import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// `q=auto`, `q=auto:low|high|SCORE` and `--default-quality auto` through real HTTP: the output keeps its target
/// against the server's own fixed-size render (a lossless PNG of the same request), and higher levels cost bytes.
final class ImageServerAutoQualityTests: XCTestCase {
    var harness: ServerHarness!

    override func tearDown() async throws {
        await harness?.stop()
    }

    /// A real photograph from the corpus (the synthetic gradient of other tests is too easy to compress).
    private func startServing(configure: (inout ImageServiceConfiguration) -> Void = { _ in }) async throws -> String {
        let dir: URL
        do { dir = try Corpus.require().appendingPathComponent("photos") } catch { throw XCTSkip("\(error)") }
        harness = try await ServerHarness(configure: configure)
        let bytes = try Data(contentsOf: dir.appendingPathComponent("kodak_23.png"))
        harness.origin.route("/photo.png", .bytes([UInt8](bytes), contentType: "image/png"))
        return harness.source("/photo.png")
    }

    func testAutoLevelsKeepTheirScoresAndOrderTheBytes() async throws {
        let source = try await startServing()
        let base = [("url", source), ("w", "300"), ("h", "200")]
        let lossless = await harness.image(base + [("format", "png")])
        let reference = try lossless.decoded().firstFrame.buffer
        for format in ["jpeg", "webp"] {
            var sizes: [Int] = []
            for (q, score) in [("auto:low", 60.0), ("auto", 70), ("auto:high", 80), ("auto:88.5", 88.5)] {
                let reply = await harness.image(base + [("format", format), ("q", q)])
                XCTAssertEqual(reply.status, 200, "\(format) \(q)")
                let decoded = try reply.decoded().firstFrame.buffer
                let measured = try SSIMULACRA2.score(reference: reference, distorted: decoded)
                XCTAssertGreaterThanOrEqual(measured, score, "\(format) q=\(q)")
                sizes.append(reply.body.count)
            }
            // Levels two apart never cost fewer bytes (adjacent ones may, where JPEG switches to 4:4:4 between them
            // or WebP is lossless at both).
            XCTAssertLessThanOrEqual(sizes[0], sizes[2], "\(format): \(sizes)")
            XCTAssertLessThanOrEqual(sizes[1], sizes[3], "\(format): \(sizes)")
        }
    }

    /// Different targets are different results (the result key holds the target), and a fixed q is not auto.
    func testTargetIsPartOfTheResultKey() throws {
        func key(_ q: String?) throws -> String {
            var pairs = [(name: "url", value: "https://example.com/a.jpg")]
            if let q { pairs.append((name: "q", value: q)) }
            return try ImageRequestOptions(pairs: pairs).canonicalProcessing
        }
        let keys = try [key(nil), key("auto"), key("auto:high"), key("auto:low"), key("auto:70"), key("80")]
        XCTAssertEqual(keys[1], keys[4], "auto is auto:70")
        XCTAssertEqual(keys[0], keys[5], "no q is q=80")
        XCTAssertEqual(Set(keys).count, 4)
        // The unscored mode is a different result from the scored one at the same level.
        let predicted = try [key("auto:predicted"), key("auto:70:predicted"), key("auto:high:predicted")]
        XCTAssertEqual(predicted[0], predicted[1])
        XCTAssertFalse(keys.contains(predicted[0]))
        XCTAssertNotEqual(predicted[0], predicted[2])
    }

    func testBadAutoValuesAre400() throws {
        for bad in ["auto:", "auto:best", "auto:101", "auto:-1", "automatic", "auto:nan", "auto:predicted:predicted",
                    "auto:high:scored"] {
            XCTAssertThrowsError(try ImageRequestOptions(pairs: [(name: "url", value: "https://example.com/a.jpg"),
                                                                 (name: "q", value: bad)]), bad)
        }
    }

    /// `--default-quality auto:high` applies to requests without q; an explicit q still wins.
    func testDefaultQualityAuto() async throws {
        let source = try await startServing { $0.defaultAutomaticQuality = .high }
        let base = [("url", source), ("w", "300"), ("h", "200")]
        let reference = try await harness.image(base + [("format", "png")]).decoded().firstFrame.buffer
        let automatic = await harness.image(base + [("format", "jpeg")])
        let fixed = await harness.image(base + [("format", "jpeg"), ("q", "30")])
        XCTAssertGreaterThanOrEqual(try SSIMULACRA2.score(reference: reference, distorted: automatic.decoded().firstFrame.buffer), 80)
        XCTAssertLessThan(try SSIMULACRA2.score(reference: reference, distorted: fixed.decoded().firstFrame.buffer), 80)
    }
}
