import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// thumbor URLs write JPEG with libjpeg's Annex K tables, as thumbor's PIL does (so `quality(N)` looks and weighs
/// what it does in thumbor), while `/image` keeps Robidoux's; the two never share a cached result.
final class ThumborJPEGTablesTests: XCTestCase {
    func testThumborURLsWriteAnnexKTablesAndImageKeepsRobidoux() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 800, height: 600), contentType: "image/jpeg"))
        let image = "127.0.0.1:\(harness.origin.url("/").port!)/photo.jpg"

        let thumbor = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/unsafe/200x150/filters:quality(70)/\(image)")!)
        XCTAssertEqual(thumbor.status, 200)
        let thumborTables = JPEGTables.quantizationTables(thumbor.body)
        XCTAssertEqual(thumborTables[0], JPEGTables.scaled(JPEGTables.annexKLuma, quality: 70), "thumbor's luma table")
        XCTAssertEqual(thumborTables[1], JPEGTables.scaled(JPEGTables.annexKChroma, quality: 70), "thumbor's chroma table")

        // The same geometry and quality through /image: Robidoux's luma table, another cached result.
        let own = await harness.image([("url", "http://\(image)"), ("w", "200"), ("h", "150"), ("fit", "cover"),
                                       ("q", "70"), ("format", "jpeg")])
        XCTAssertEqual(own.status, 200)
        XCTAssertEqual(JPEGTables.quantizationTables(own.body)[0], JPEGTables.scaled(JPEGTables.robidoux, quality: 70))
        XCTAssertNotEqual(own.body, thumbor.body)
        // Asked again, each is its own cache hit.
        let again = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/unsafe/200x150/filters:quality(70)/\(image)")!)
        XCTAssertEqual(again.body, thumbor.body)
        await harness.stop()
    }
}
