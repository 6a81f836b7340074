import Foundation
import WebImage
import XCTest

final class HTTPCachePolicyTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func testMaxAgeDecidesFreshness() {
        let policy = HTTPCachePolicy(headers: ["cache-control": "public, max-age=60", "ETag": "\"v1\""], fetchDate: t0)
        XCTAssertEqual(policy.maxAge, 60)
        XCTAssertTrue(policy.isFresh(at: t0.addingTimeInterval(59)))
        XCTAssertFalse(policy.isFresh(at: t0.addingTimeInterval(61)))
        XCTAssertEqual(policy.conditionalHeaders, ["If-None-Match": "\"v1\""])
    }

    func testExpiresAndInvalidExpires() {
        let fresh = HTTPCachePolicy(headers: ["Expires": "Wed, 15 Nov 2023 00:00:00 GMT"], fetchDate: t0)
        XCTAssertNotNil(fresh.expires)
        XCTAssertTrue(fresh.isFresh(at: t0))                      // 2023-11-14 22:13 < expiry
        XCTAssertFalse(fresh.isFresh(at: t0.addingTimeInterval(86_400)))
        let invalid = HTTPCachePolicy(headers: ["Expires": "0"], fetchDate: t0)
        XCTAssertFalse(invalid.isFresh(at: t0))
        // max-age wins over Expires.
        let both = HTTPCachePolicy(headers: ["Expires": "Wed, 15 Nov 2023 00:00:00 GMT", "Cache-Control": "max-age=1"], fetchDate: t0)
        XCTAssertFalse(both.isFresh(at: t0.addingTimeInterval(2)))
    }

    func testNoCacheAndNoStoreAreNeverFresh() {
        XCTAssertFalse(HTTPCachePolicy(headers: ["Cache-Control": "no-cache, max-age=600"], fetchDate: t0).isFresh(at: t0))
        let noStore = HTTPCachePolicy(headers: ["Cache-Control": "no-store"], fetchDate: t0)
        XCTAssertTrue(noStore.noStore)
        XCTAssertFalse(noStore.isFresh(at: t0))
        XCTAssertFalse(HTTPCachePolicy(headers: [:], fetchDate: t0).isFresh(at: t0), "no freshness information: revalidate")
    }

    func testA304RefreshesTheFetchDateAndValidators() {
        let old = HTTPCachePolicy(headers: ["Cache-Control": "max-age=10", "ETag": "\"a\"", "Last-Modified": "Tue, 14 Nov 2023 00:00:00 GMT"], fetchDate: t0)
        let later = t0.addingTimeInterval(100)
        XCTAssertFalse(old.isFresh(at: later))
        let refreshed = old.refreshed(with: ["ETag": "\"b\""], at: later)
        XCTAssertEqual(refreshed.etag, "\"b\"")
        XCTAssertEqual(refreshed.lastModified, old.lastModified)
        XCTAssertTrue(refreshed.isFresh(at: later.addingTimeInterval(5)))
        XCTAssertEqual(refreshed.conditionalHeaders["If-Modified-Since"], "Tue, 14 Nov 2023 00:00:00 GMT")
    }

    func testCodableRoundTrip() throws {
        let policy = HTTPCachePolicy(headers: ["Cache-Control": "max-age=5", "ETag": "W/\"x\""], fetchDate: t0)
        let data = try JSONEncoder().encode(policy)
        XCTAssertEqual(try JSONDecoder().decode(HTTPCachePolicy.self, from: data), policy)
    }
}
