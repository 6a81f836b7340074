@testable import Fetcher
import Foundation
import XCTest

/// Review of `HTTPDate` against RFC 9110 §5.6.7's edge cases.
final class HTTPDateReviewTests: XCTestCase {
    private let gmt = TimeZone(identifier: "GMT")!

    private func twoDigits(_ year: Int) -> String {
        let short = ((year % 100) + 100) % 100
        return short < 10 ? "0\(short)" : "\(short)"
    }

    /// "Recipients of a timestamp value in rfc850-date format ... MUST interpret a timestamp that appears to be
    /// more than 50 years in the future as representing the most recent year in the past that had the same last
    /// two digits." The timestamp, not the year: 31 Dec of this year + 50 is more than 50 years ahead (unless
    /// today is 31 Dec), so it is this year − 50; 1 Jan of this year + 50 is less, so it stays.
    func testTheFiftyYearRuleComparesTimestampsNotYears() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = gmt
        let now = Date()
        let today = calendar.dateComponents([.year, .month, .day], from: now)
        let thisYear = try XCTUnwrap(today.year)
        if today.month == 12 && today.day == 31 { throw XCTSkip("31 Dec: the boundary case needs another day") }
        let late = try XCTUnwrap(HTTPDate.parse("Thursday, 31-Dec-\(twoDigits(thisYear + 50)) 23:59:59 GMT"))
        XCTAssertEqual(calendar.component(.year, from: late), thisYear - 50,
                       "31 Dec \(thisYear + 50) is more than 50 years ahead of \(now)")
        let early = try XCTUnwrap(HTTPDate.parse("Monday, 01-Jan-\(twoDigits(thisYear + 50)) 00:00:00 GMT"))
        if today.month != 1 || today.day != 1 {
            XCTAssertEqual(calendar.component(.year, from: early), thisYear + 50, "less than 50 years ahead: kept")
        }
        let lastYear = try XCTUnwrap(HTTPDate.parse("Sunday, 06-Nov-\(twoDigits(thisYear - 1)) 08:49:37 GMT"))
        XCTAssertEqual(calendar.component(.year, from: lastYear), thisYear - 1)
    }

    /// The same rule at an injected instant, to the second: exactly 50 years ahead is kept, one second more is
    /// the past century.
    func testTheFiftyYearBoundaryToTheSecond() throws {
        let now = try XCTUnwrap(HTTPDate.parse("Mon, 01 Jun 2026 12:00:00 GMT"))
        func year(_ text: String) -> Int? {
            HTTPDate.parse(text, now: now).map { Int(HTTPDate.format($0).split(separator: " ")[3]) ?? 0 }
        }
        XCTAssertEqual(year("Monday, 01-Jun-76 12:00:00 GMT"), 2076, "exactly 50 years ahead")
        XCTAssertEqual(year("Monday, 01-Jun-76 12:00:01 GMT"), 1976, "one second more")
        XCTAssertEqual(year("Thursday, 31-Dec-76 23:59:59 GMT"), 1976)
        XCTAssertEqual(year("Friday, 01-Jan-76 00:00:00 GMT"), 2076)
        XCTAssertEqual(year("Sunday, 06-Nov-94 08:49:37 GMT"), 1994)
        XCTAssertEqual(year("Saturday, 31-May-25 00:00:00 GMT"), 2025)
    }

    /// Calendar edges of all three formats: leap days of century years, the last second of a day, and values
    /// just past each field's range.
    func testCalendarEdges() {
        XCTAssertNotNil(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT"), "2000 is a leap year")
        XCTAssertNil(HTTPDate.parse("Thu, 29 Feb 1900 00:00:00 GMT"), "1900 is not")
        XCTAssertNil(HTTPDate.parse("Sun, 31 Apr 2024 00:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 24:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:60:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:49:61 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 6 Nov 1994 08:49:37 GMT"), "IMF-fixdate's day is 2DIGIT")
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 +0000"), "only GMT")
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 23:59:59 GMT")?.timeIntervalSince1970, 784_166_399)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"))
        XCTAssertEqual(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT")?.timeIntervalSince1970, 253_402_300_799)
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT\0"))
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.format(Date(timeIntervalSince1970: -1)), "Wed, 31 Dec 1969 23:59:59 GMT")
    }
}
