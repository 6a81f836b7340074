import Fetcher
import Foundation
import WebImage
import XCTest

/// `HTTPCachePolicy` against RFC 9111 §4.2's rules, one rule a test, with the headers a real response carries
/// (several lines of a name included). Times are explicit instants: no test waits for a clock.
final class HTTPFreshnessRFCTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    private let url = URL(string: "http://origin.test/a.png")!

    private func response(_ fields: [(String, String)], status: Int = 200, redirects: [FetchResponse] = []) -> FetchResponse {
        FetchResponse(url: url, statusCode: status, headers: fields.map { FetchResponse.Header(name: $0.0, value: $0.1) },
                      expectedContentLength: nil, redirects: redirects)
    }

    private func date(_ offset: Double) -> String { HTTPDate.format(t0.addingTimeInterval(offset)) }

    /// §4.2.3: a response already 59 s old upstream (`Age: 59`) with `max-age=60` has one second left.
    func testAgeCountsTimeSpentUpstream() {
        let policy = HTTPCachePolicy(response: response([("Cache-Control", "max-age=60"), ("Age", "59"), ("Date", date(0))]),
                                     fetchDate: t0)
        XCTAssertEqual(policy.initialAge, 59)
        XCTAssertTrue(policy.isFresh(at: t0.addingTimeInterval(0.5)))
        XCTAssertFalse(policy.isFresh(at: t0.addingTimeInterval(1)))
        XCTAssertEqual(policy.currentAge(at: t0.addingTimeInterval(10)), 69)
    }

    /// §4.2.3: the apparent age (receipt − `Date`) counts when larger than `Age`.
    func testApparentAgeCountsWhenLargerThanAge() {
        let policy = HTTPCachePolicy(response: response([("Cache-Control", "max-age=60"), ("Age", "5"), ("Date", date(-30))]),
                                     fetchDate: t0)
        XCTAssertEqual(policy.initialAge, 30)
        XCTAssertTrue(policy.isFresh(at: t0.addingTimeInterval(29)))
        XCTAssertFalse(policy.isFresh(at: t0.addingTimeInterval(30)))
    }

    /// §4.2.1: the lifetime from `Expires` is `Expires − Date`, both on the origin's clock. A client a day
    /// behind used to serve a 1 s lifetime for a day.
    func testExpiresIsMeasuredFromTheOriginsDate() {
        let originNow = t0.addingTimeInterval(86_400) // the client's clock is a day behind the origin's
        let policy = HTTPCachePolicy(response: response([("Date", HTTPDate.format(originNow)),
                                                         ("Expires", HTTPDate.format(originNow.addingTimeInterval(1)))]),
                                     fetchDate: t0)
        XCTAssertEqual(policy.freshnessLifetime, 1)
        XCTAssertTrue(policy.isFresh(at: t0.addingTimeInterval(0.5)))
        XCTAssertFalse(policy.isFresh(at: t0.addingTimeInterval(2)), "stale after its 1 s, not after a day")
    }

    /// §5.3: an invalid `Expires` ("0") is in the past; several that disagree mean stale (§4.2.1).
    func testInvalidOrConflictingExpiresIsStale() {
        XCTAssertFalse(HTTPCachePolicy(response: response([("Expires", "0")]), fetchDate: t0).isFresh(at: t0))
        let conflicting = response([("Date", date(0)), ("Expires", date(3_600)), ("Expires", date(7_200))])
        XCTAssertFalse(HTTPCachePolicy(response: conflicting, fetchDate: t0).isFresh(at: t0))
        let same = response([("Date", date(0)), ("Expires", date(3_600)), ("Expires", date(3_600))])
        XCTAssertTrue(HTTPCachePolicy(response: same, fetchDate: t0).isFresh(at: t0))
    }

    /// RFC 9110 §5.3: `no-store` on one line and `max-age=600` on another: not stored, not fresh.
    func testRepeatedCacheControlLinesAreMerged() {
        let policy = HTTPCachePolicy(response: response([("Cache-Control", "no-store"), ("cache-control", "max-age=600")]),
                                     fetchDate: t0)
        XCTAssertTrue(policy.noStore)
        XCTAssertEqual(policy.maxAge, 600)
        XCTAssertFalse(policy.isFresh(at: t0))
    }

    /// `max-age` wins over `Expires` (§5.3), even a malformed one (then stale).
    func testMaxAgeWinsOverExpires() {
        let policy = HTTPCachePolicy(response: response([("Date", date(0)), ("Expires", date(3_600)),
                                                         ("Cache-Control", "max-age=bogus")]), fetchDate: t0)
        XCTAssertEqual(policy.maxAge, 0)
        XCTAssertFalse(policy.isFresh(at: t0))
    }

    /// A 302 without freshness in front of a target cached for a year: revalidated at once, so the endpoint
    /// may point elsewhere next time. A 302 with `max-age=10`: fresh for 10 s, not a year.
    func testRedirectsAreCachedByTheirOwnFreshness() {
        let target = [("Cache-Control", "max-age=31536000, immutable"), ("Date", date(0))]
        let bare = response([("Location", "/v1.png")], status: 302)
        XCTAssertFalse(HTTPCachePolicy(response: response(target, redirects: [bare]), fetchDate: t0).isFresh(at: t0))
        let tenSeconds = response([("Location", "/v1.png"), ("Cache-Control", "max-age=10"), ("Date", date(0))], status: 302)
        let policy = HTTPCachePolicy(response: response(target, redirects: [tenSeconds]), fetchDate: t0)
        XCTAssertEqual(policy.redirectFreshness, 10)
        XCTAssertTrue(policy.isFresh(at: t0.addingTimeInterval(9)))
        XCTAssertFalse(policy.isFresh(at: t0.addingTimeInterval(11)))
        let twoHops = response(target, redirects: [tenSeconds, response([("Cache-Control", "max-age=3")], status: 301)])
        XCTAssertEqual(HTTPCachePolicy(response: twoHops, fetchDate: t0).redirectFreshness, 3, "the least of the hops")
        XCTAssertNil(HTTPCachePolicy(response: response(target), fetchDate: t0).redirectFreshness)
    }

    /// §4.3.4: a 304 replaces the stored `Cache-Control` only when it sends one, and brings its own `Date` and
    /// `Age`.
    func testA304FreshensAsTheRFCSays() {
        let stored = HTTPCachePolicy(response: response([("Cache-Control", "max-age=60"), ("ETag", "\"a\""), ("Date", date(0))]),
                                     fetchDate: t0)
        let later = t0.addingTimeInterval(1_000)
        let bare304 = response([("Date", HTTPDate.format(later)), ("Age", "10")], status: 304)
        let kept = stored.refreshed(with: bare304, at: later)
        XCTAssertEqual(kept.maxAge, 60, "no Cache-Control in the 304: the stored one stays")
        XCTAssertEqual(kept.initialAge, 10)
        XCTAssertTrue(kept.isFresh(at: later.addingTimeInterval(49)))
        XCTAssertFalse(kept.isFresh(at: later.addingTimeInterval(50)))
        let replaced = stored.refreshed(with: response([("Cache-Control", "no-cache"), ("ETag", "\"b\"")], status: 304), at: later)
        XCTAssertTrue(replaced.mustRevalidate)
        XCTAssertNil(replaced.maxAge)
        XCTAssertEqual(replaced.etag, "\"b\"")
    }

    /// Validators are kept only when well formed and bounded: they are stored with every entry and sent back.
    func testValidatorsAreBoundedAndWellFormed() {
        let long = "\"" + String(repeating: "e", count: 10_000) + "\""
        let policy = HTTPCachePolicy(response: response([("ETag", long), ("Last-Modified", "yesterday")]), fetchDate: t0)
        XCTAssertNil(policy.etag)
        XCTAssertNil(policy.lastModified)
        XCTAssertTrue(policy.conditionalHeaders.isEmpty)
    }

    /// Metadata written before `date`, `age` and `redirectFreshness` existed still decodes, with the same
    /// freshness as before.
    func testOldMetadataDecodes() throws {
        let old = #"{"etag":"\"v1\"","maxAge":60,"mustRevalidate":false,"noStore":false,"fetchDate":0}"#
        let policy = try JSONDecoder().decode(HTTPCachePolicy.self, from: Data(old.utf8))
        XCTAssertEqual(policy.etag, "\"v1\"")
        XCTAssertNil(policy.date)
        XCTAssertTrue(policy.isFresh(at: Date(timeIntervalSinceReferenceDate: 59)))
        XCTAssertFalse(policy.isFresh(at: Date(timeIntervalSinceReferenceDate: 61)))
    }
}
