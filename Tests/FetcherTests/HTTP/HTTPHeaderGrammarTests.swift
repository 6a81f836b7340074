@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// The header grammars against RFC 9110/9111's own rules and examples, inputs at and past their limits, and
/// random bytes (none may trap: `Cache-Control: =` once killed the process).
final class HTTPHeaderGrammarTests: XCTestCase {
    // MARK: Dates (RFC 9110 §5.6.7)

    func testTheRFCsThreeExampleDatesAreTheSameInstant() throws {
        let expected = Date(timeIntervalSince1970: 784_111_777) // 1994-11-06T08:49:37Z
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), expected)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), expected)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), expected)
        XCTAssertEqual(HTTPDate.format(expected), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.parse("  Sun, 06 Nov 1994 08:49:37 GMT\t"), expected, "OWS around the value")
    }

    func testInvalidDatesAreRefusedNotTrapped() {
        for text in ["", "0", "-1", "=", ",", "Sun,", "Sun, 06 Nov 1994", "Sun, 31 Apr 2024 00:00:00 GMT",
                     "Sun, 29 Feb 2023 00:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
                     "Sun, 06 Nov 0000 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST",
                     "Sun, 06 Nov 1994 08:49:37 GMT trailing", "Sun, 6 Nov 1994 08:49:37 GMT",
                     "Sun, 999999999999999999999 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\0",
                     String(repeating: "9", count: 100_000)] {
            XCTAssertNil(HTTPDate.parse(text), text.prefix(60).debugDescription)
        }
        XCTAssertNotNil(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT"), "a leap day")
        XCTAssertEqual(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT"), HTTPDate.parse("Sat, 31 Dec 2016 23:59:59 GMT"),
                       "a leap second reads as :59")
    }

    func testARFC850YearMoreThanFiftyYearsAheadIsInThePast() throws {
        let thisYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: Date()).year!
        let ahead = (thisYear + 60) % 100
        let twoDigits = ahead < 10 ? "0\(ahead)" : "\(ahead)"
        let date = try XCTUnwrap(HTTPDate.parse("Monday, 01-Jan-\(twoDigits) 00:00:00 GMT"))
        XCTAssertLessThan(date, Date(), "two-digit year \(ahead) is \(thisYear + 60 - 100)")
    }

    /// Differential: Foundation's formatter (the old parser) and ours on random instants of years 1900–2200.
    func testRandomDatesAgreeWithFoundationsFormatter() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for _ in 0..<2_000 {
            let seconds = Double(Int64(random.next() % 9_467_280_000) - 2_208_988_800) // 1900 … 2200
            let date = Date(timeIntervalSince1970: seconds)
            let foundation = formatter.string(from: date)
            XCTAssertEqual(HTTPDate.format(date), foundation, "seed \(seed)")
            XCTAssertEqual(HTTPDate.parse(foundation), date, "seed \(seed): \(foundation)")
        }
    }

    // MARK: delta-seconds, Cache-Control (RFC 9111 §1.2.2, §5.2)

    func testDeltaSecondsSaturatesAt2To31AndRefusesEverythingElse() {
        XCTAssertEqual(DeltaSeconds.parse("0"), 0)
        XCTAssertEqual(DeltaSeconds.parse(" 60 "), 60)
        XCTAssertEqual(DeltaSeconds.parse("2147483647"), 2_147_483_647)
        XCTAssertEqual(DeltaSeconds.parse("2147483648"), DeltaSeconds.maximum)
        XCTAssertEqual(DeltaSeconds.parse("2147483649"), DeltaSeconds.maximum)
        XCTAssertEqual(DeltaSeconds.parse(String(repeating: "9", count: 10_000)), DeltaSeconds.maximum)
        for text in ["", " ", "-1", "+1", "1.5", "1e3", "1 2", "0x10", "١٢", "1\u{0}"] {
            XCTAssertNil(DeltaSeconds.parse(text), text.debugDescription)
        }
    }

    func testTheCacheControlThatCrashedTheProcess() {
        for value in ["=", "max-age=1,=", "==", ",=,", "=max-age", "max-age==1", "\"", "max-age=\"1", "\u{0}=\u{0}"] {
            _ = CacheControl(fieldValues: [value])
        }
        XCTAssertEqual(CacheControl(fieldValues: ["max-age=1,="]).maxAge, 1)
        XCTAssertEqual(CacheControl(fieldValues: ["max-age=1,="]).malformedCount, 1)
    }

    func testRepeatedLinesAreOneList() {
        let control = CacheControl(fieldValues: ["no-store", "max-age=600"])
        XCTAssertTrue(control.noStore)
        XCTAssertEqual(control.maxAge, 600)
        XCTAssertTrue(CacheControl(fieldValues: ["public", "NO-CACHE"]).noCache, "names are case-insensitive")
    }

    func testMalformedOrConflictingMaxAgeMeansStale() {
        for lines in [["max-age="], ["max-age=-1"], ["max-age=1.5"], ["max-age"], ["max-age=60, max-age=120"],
                      ["max-age=60", "max-age=abc"]] {
            XCTAssertEqual(CacheControl(fieldValues: lines).maxAge, 0, "\(lines)")
        }
        XCTAssertEqual(CacheControl(fieldValues: ["max-age=60, max-age=60"]).maxAge, 60, "the same value twice")
        XCTAssertEqual(CacheControl(fieldValues: ["max-age=\"60\""]).maxAge, 60, "quoted, read like a token")
        XCTAssertNil(CacheControl(fieldValues: ["s-maxage=60"]).maxAge, "a shared cache's")
    }

    func testQuotedCommasDoNotSplitDirectives() {
        let control = CacheControl(fieldValues: ["private=\"a, no-store, b\", max-age=30"])
        XCTAssertFalse(control.noStore, "no-store inside a quoted argument is not a directive")
        XCTAssertEqual(control.maxAge, 30)
        XCTAssertTrue(CacheControl(fieldValues: ["no-cache=\"Set-Cookie\""]).noCache, "qualified no-cache revalidates")
    }

    // MARK: ETag, Content-Type, Retry-After

    func testEntityTags() {
        XCTAssertEqual(EntityTag.parse("\"xyzzy\""), "\"xyzzy\"")
        XCTAssertEqual(EntityTag.parse("W/\"xyzzy\""), "W/\"xyzzy\"")
        XCTAssertEqual(EntityTag.parse("\"\""), "\"\"")
        XCTAssertEqual(EntityTag.parse("abc123"), "abc123", "unquoted, kept as browsers keep it")
        for text in ["", "\"", "W/", "\"a\"b\"", "\"a b\"", "a b", "a,b", "\"a\u{7}\"", "a\r\nX-Injected: 1"] {
            XCTAssertNil(EntityTag.parse(text), text.debugDescription)
        }
        let atLimit = "\"" + String(repeating: "a", count: EntityTag.maximumLength - 2) + "\""
        XCTAssertEqual(EntityTag.parse(atLimit), atLimit)
        XCTAssertNil(EntityTag.parse("\"" + String(repeating: "a", count: EntityTag.maximumLength - 1) + "\""), "one past")
    }

    func testMediaTypes() throws {
        let type = try XCTUnwrap(MediaType.parse("Image/SVG+XML; Charset=\"UTF-8\"; q=1"))
        XCTAssertEqual(type.essence, "image/svg+xml")
        XCTAssertEqual(type.parameters["charset"], "UTF-8")
        XCTAssertEqual(MediaType.parse("text/html;charset=\"a;b\"")?.parameters["charset"], "a;b")
        for text in ["", "image", "/png", "image/", "image/png/x", "im age/png", "=", ";"] {
            XCTAssertNil(MediaType.parse(text), text.debugDescription)
        }
    }

    func testRetryAfter() {
        let now = Date(timeIntervalSince1970: 784_111_777)
        XCTAssertEqual(RetryAfter.delay("120", now: now), 120)
        XCTAssertEqual(RetryAfter.delay("Sun, 06 Nov 1994 08:51:37 GMT", now: now), 120)
        XCTAssertEqual(RetryAfter.delay("Sun, 06 Nov 1994 08:00:00 GMT", now: now), 0, "a date past is no delay")
        XCTAssertNil(RetryAfter.delay("soon", now: now))
        XCTAssertNil(RetryAfter.delay("-5", now: now))
    }

    // MARK: The header line parser against libcurl's reading

    private func parse(_ lines: [String]) -> [FetchResponse.Header] {
        var parser = CurlHeaderParser()
        for line in lines {
            Array((line + "\r\n").utf8).withUnsafeBytes { parser.consume($0) }
        }
        return parser.headers
    }

    func testHeaderLinesAreReadAsRFC9112Says() {
        XCTAssertEqual(parse(["HTTP/1.1 302 Found", "Location : http://a/", "Location: http://b/"]).map(\.value),
                       ["http://b/"], "whitespace before the colon: not a field")
        XCTAssertEqual(parse(["HTTP/1.1 200 OK", "A: 1", "HTTP/1.1 200 OK", "B: 2"]).map(\.name), ["A", "B"],
                       "a status line between fields starts nothing: the fields around it are one block")
        XCTAssertEqual(parse(["HTTP/1.1 100 Continue", "", "HTTP/1.1 200 OK", "B: 2"]).map(\.name), ["B"],
                       "a new block after a blank line does")
        XCTAssertEqual(parse(["HTTP/1.1 200 OK", "X: a", " b", "\tc"]).first?.value, "a b c", "obs-fold")
        XCTAssertEqual(parse(["HTTP/1.1 200 OK", "Bad Name: 1", ": empty", "NoColon", "Ok:"]).map(\.name), ["Ok"])
        XCTAssertEqual(parse(["HTTP/1.1 200 OK", "X:  \t v \t "]).first?.value, "v")
    }

    /// Random header blocks: the line parser and every grammar run on them without trapping, and a parsed
    /// field name is always a token.
    func testRandomBytesNeverTrap() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let alphabet = Array("HTTP/1.1 200 :=,;\"\\W/-0123456789 \tmax-age no-store GMT Sun Nov\r\n\0é".utf8)
        for _ in 0..<3_000 {
            let count = Int(random.next() % 120)
            let bytes = (0..<count).map { _ in random.next() % 4 == 0 ? UInt8(truncatingIfNeeded: random.next())
                                                                      : alphabet[Int(random.next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            for field in parse(lines) {
                XCTAssertTrue(HTTPFieldList.isToken(field.name), "seed \(seed): \(field.name.debugDescription)")
            }
            _ = CacheControl(fieldValues: lines)
            for line in lines {
                _ = HTTPDate.parse(line)
                _ = DeltaSeconds.parse(line)
                _ = EntityTag.parse(line)
                _ = MediaType.parse(line)
                _ = RetryAfter.delay(line)
            }
        }
    }
}

extension HTTPHeaderGrammarTests {
    func testContentLengthIsDigitsOnlyAndSaturates() {
        XCTAssertEqual(Transfer.parseContentLength("0"), 0)
        XCTAssertEqual(Transfer.parseContentLength(" 1024 "), 1_024)
        XCTAssertEqual(Transfer.parseContentLength("9223372036854775807"), .max)
        XCTAssertEqual(Transfer.parseContentLength("99999999999999999999999"), .max, "overflow is over any limit")
        for text in ["", "+5", "-1", "1 2", "5, 5", "0x10", "1e3"] {
            XCTAssertNil(Transfer.parseContentLength(text), text.debugDescription)
        }
    }
}
