import Foundation
import TestSupport
import WebImageServerCore
import XCTest

/// Review: an origin that answers 200 with something that is not an image (a CDN's or a load balancer's error
/// page, a maintenance page) fails the request with 415 — and the bytes must not be kept as the source: once
/// the origin serves the image again, the same request must get it, not the cached error page forever.
final class SourceCacheReviewTests: XCTestCase {
    func testANonImageAnswerIsNotCachedAsTheSource() async throws {
        let harness = try await ServerHarness()
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        let answered = Tally()
        harness.origin.route("/photo.jpg") { _ in
            answered.next() == 0
                ? .bytes(Array("<html>503 Service Temporarily Unavailable</html>".utf8), contentType: "text/html")
                : .bytes(jpeg, contentType: "image/jpeg")
        }
        let pairs = [("url", harness.source("/photo.jpg")), ("w", "32")]
        let first = await harness.image(pairs)
        XCTAssertEqual(first.status, 415, "the error page is not an image")
        let second = await harness.image(pairs)
        XCTAssertEqual(second.status, 200, "the origin recovered, but the error page was served from the originals cache")
        XCTAssertEqual(harness.origin.requestCount(for: "/photo.jpg"), 2, "the origin was asked again")
        // Another result of the same source is not made from the error page either.
        let other = await harness.image([("url", harness.source("/photo.jpg")), ("w", "16")])
        XCTAssertEqual(other.status, 200)
        await harness.stop()
    }
}
