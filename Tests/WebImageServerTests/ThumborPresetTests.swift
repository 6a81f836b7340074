import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Presets the thumbor way: `/SIGNATURE/filters:preset(NAME)/IMAGE` is `/image?url=IMAGE&preset=NAME`, served under
/// `--presets-only` (where every other thumbor URL is refused), and it stands alone.
final class ThumborPresetTests: XCTestCase {
    static let key = "thumbor-preset-test-key-0123456789"
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness {
            $0.presets = [try! ImagePreset(definition: "thumb=w=120&h=80&fit=cover&format=png"),
                          try! ImagePreset(definition: "webp=format=webp&q=60")]
            $0.presetsOnly = true
            $0.thumborKeys = [Array(Self.key.utf8)]
        }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 800, height: 600), contentType: "image/jpeg"))
    }

    override func tearDown() async throws { await harness?.stop() }

    private func signed(_ part: String) throws -> String {
        "/" + (try ThumborSigner(keys: [Array(Self.key.utf8)])).signature(of: part) + "/" + part
    }

    private func get(_ path: String) async -> ServerHarness.Reply {
        await harness.get(URL(string: "http://127.0.0.1:\(harness.port)\(path)")!)
    }

    private var image: String { "127.0.0.1:\(harness.origin.url("/").port!)/photo.jpg" }

    func testAPresetInAThumborURLIsThePresetsRequest() async throws {
        let thumbor = await get(try signed("filters:preset(thumb)/\(image)"))
        XCTAssertEqual(thumbor.status, 200, String(decoding: thumbor.body.prefix(200), as: UTF8.self))
        XCTAssertEqual(thumbor.header("Content-Type"), "image/png")
        let decoded = try thumbor.decoded()
        XCTAssertEqual([decoded.width, decoded.height], [120, 80])
        // The same result as /image with the same preset: one cache entry, the same bytes.
        let query = await harness.image([("url", "http://\(image)"), ("preset", "thumb")])
        XCTAssertEqual(query.status, 200)
        XCTAssertEqual(query.body, thumbor.body)
        // Several presets merge left to right, as `preset=thumb,webp`.
        let merged = await get(try signed("filters:preset(thumb,webp)/\(image)"))
        XCTAssertEqual(merged.status, 200)
        XCTAssertEqual(merged.header("Content-Type"), "image/webp")
        XCTAssertEqual(try merged.decoded().width, 120)
    }

    func testPresetsOnlyStillRefusesEveryOtherThumborURL() async throws {
        for part in ["120x80/\(image)", "filters:quality(50)/\(image)", "\(image)"] {
            let reply = await get(try signed(part))
            XCTAssertEqual(reply.status, 400, part)
        }
    }

    func testThePresetStandsAlone() async throws {
        let refused = [
            "200x100/filters:preset(thumb)/\(image)",            // a size next to it
            "fit-in/filters:preset(thumb)/\(image)",
            "trim/filters:preset(thumb)/\(image)",
            "10x10:200x200/filters:preset(thumb)/\(image)",
            "smart/filters:preset(thumb)/\(image)",
            "filters:preset(thumb):quality(50)/\(image)",       // another filter
            "filters:quality(50):preset(thumb)/\(image)",
            "filters:preset()/\(image)",                        // no name
            "filters:preset(nope)/\(image)",                    // an unknown preset
        ]
        for part in refused {
            let reply = await get(try signed(part))
            XCTAssertEqual(reply.status, 400, part)
        }
        // Unsigned or signed with another key: the signature is checked first, as for every thumbor URL.
        let wrongKey = "/" + (try ThumborSigner(keys: [Array("another-key-of-sixteen-bytes-or-more".utf8)]))
            .signature(of: "filters:preset(thumb)/\(image)") + "/filters:preset(thumb)/\(image)"
        let forged = await get(wrongKey)
        XCTAssertEqual(forged.status, 400)
        XCTAssertEqual(harness.origin.requestCount(for: "/photo.jpg"), 0, "nothing refused reached the origin")
    }
}
