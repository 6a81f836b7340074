import Foundation

/// An HTTP date (RFC 9110 §5.6.7): parsed from any of its three formats, written as IMF-fixdate.
///
///     HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")   // IMF-fixdate (what senders must write)
///     HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT")  // obsolete RFC 850
///     HTTPDate.parse("Sun Nov  6 08:49:37 1994")        // obsolete asctime
///
/// The parser reads bytes by hand: no `DateFormatter` (locale- and allocation-heavy), no arithmetic that can
/// trap, whatever the input (the `FuzzHTTPHeaders` target feeds it random bytes). Out-of-range fields (hour 24,
/// 31 April, year 0) are refused; the day name is not checked against the date (the RFC says recipients
/// should not). A leap second (:60) reads as :59.
///
/// - Important: Pure functions; thread-safe.
public enum HTTPDate {
    /// Parses an HTTP date in any of the three formats; nil when `text` is none of them. Surrounding spaces
    /// and tabs are ignored.
    public static func parse(_ text: some StringProtocol) -> Date? {
        parse(text, now: Date())
    }

    /// `parse(_:)` with the instant an RFC 850 two-digit year is read against (for tests).
    static func parse(_ text: some StringProtocol, now: Date) -> Date? {
        var scanner = ByteScanner(text)
        scanner.skipWhitespace()
        guard let first = scanner.word(), first.count >= 3 else { return nil }
        let fields: Fields?
        if scanner.consume(UInt8(ascii: ",")) {
            scanner.skipWhitespace()
            fields = first.count == 3 ? imfFixdate(&scanner) : rfc850(&scanner, now: now)
        } else {
            fields = asctime(&scanner)
        }
        scanner.skipWhitespace()
        guard let fields, scanner.isAtEnd else { return nil }
        return fields.date
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the format senders must use.
    public static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let (year, month, day) = civil(fromDays: days)
        let weekday = Int((days + 4).floorDivided(by: 7).remainder) // 1970-01-01 was a Thursday
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(dayNames[weekday]), \(two(day)) \(monthNames[Int(month) - 1]) \(yearText) "
            + "\(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)):\(two(secondOfDay % 60)) GMT"
    }

    // MARK: - Formats

    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private struct Fields {
        var year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64

        /// The instant, or nil when a field is out of range.
        var date: Date? {
            guard (1...9_999).contains(year), (1...12).contains(month),
                  (1...HTTPDate.daysIn(month: month, year: year)).contains(day),
                  (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
            let days = HTTPDate.days(fromCivil: year, month, day)
            let seconds = days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)
            return Date(timeIntervalSince1970: Double(seconds))
        }
    }

    /// `06 Nov 1994 08:49:37 GMT` (after `Sun, `).
    private static func imfFixdate(_ s: inout ByteScanner) -> Fields? {
        guard let day = s.number(digits: 2...2), s.consume(UInt8(ascii: " ")),
              let month = s.month(), s.consume(UInt8(ascii: " ")),
              let year = s.number(digits: 4...4), s.consume(UInt8(ascii: " ")),
              let (hour, minute, second) = s.timeOfDay(), s.consume(UInt8(ascii: " ")), s.consumeGMT() else { return nil }
        return Fields(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// `06-Nov-94 08:49:37 GMT` (after `Sunday, `). A timestamp that would be more than 50 years after `now` is
    /// in the past century (RFC 9110 §5.6.7): the whole timestamp is compared, not the year alone (31 Dec of
    /// this year + 50 is more than 50 years ahead; 1 Jan of it is not).
    private static func rfc850(_ s: inout ByteScanner, now: Date) -> Fields? {
        guard let day = s.number(digits: 2...2), s.consume(UInt8(ascii: "-")),
              let month = s.month(), s.consume(UInt8(ascii: "-")),
              let shortYear = s.number(digits: 2...2), s.consume(UInt8(ascii: " ")),
              let (hour, minute, second) = s.timeOfDay(), s.consume(UInt8(ascii: " ")), s.consumeGMT() else { return nil }
        let nowSeconds = now.timeIntervalSince1970
        let (days, secondOfDay) = Int64(nowSeconds.isFinite ? max(-1e15, min(1e15, nowSeconds.rounded(.down))) : 0)
            .floorDivided(by: 86_400)
        let today = civil(fromDays: days)
        var year = today.year - today.year % 100 + shortYear
        // Fields compared in order are instants compared (both are UTC civil times).
        let limit = (today.year + 50, today.month, today.day, secondOfDay / 3_600, secondOfDay % 3_600 / 60, secondOfDay % 60)
        if (year, month, day, hour, minute, second) > limit { year -= 100 }
        return Fields(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// `Nov  6 08:49:37 1994` (after `Sun `).
    private static func asctime(_ s: inout ByteScanner) -> Fields? {
        guard s.consume(UInt8(ascii: " ")), let month = s.month(), s.consume(UInt8(ascii: " ")) else { return nil }
        _ = s.consume(UInt8(ascii: " ")) // a one-digit day is padded with a space
        guard let day = s.number(digits: 1...2), s.consume(UInt8(ascii: " ")),
              let (hour, minute, second) = s.timeOfDay(), s.consume(UInt8(ascii: " ")),
              let year = s.number(digits: 4...4) else { return nil }
        return Fields(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, Howard Hinnant's days-from-civil)

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a date with a year in 1…9999 (no overflow in that range).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01 (the inverse of `days(fromCivil:)`); the count is
    /// clamped to years 1…9999 so no input can overflow.
    static func civil(fromDays rawDays: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let days = min(max(rawDays, -719_162), 2_932_896) + 719_468
        let era = days / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

private extension Int64 {
    /// Floor division and its non-negative remainder (`-1 / 86400` is day -1, second 86399).
    func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = self % divisor
        return remainder < 0 ? (self / divisor - 1, remainder + divisor) : (self / divisor, remainder)
    }
}

/// Reads ASCII fields from the UTF-8 bytes of a header value. Never traps: every read checks the end.
struct ByteScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ text: some StringProtocol) { bytes = Array(text.utf8) }

    var isAtEnd: Bool { index == bytes.count }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// A run of ASCII letters (a day or month name).
    mutating func word() -> [UInt8]? {
        let start = index
        while index < bytes.count, (0x41...0x5A).contains(bytes[index]) || (0x61...0x7A).contains(bytes[index]) {
            index += 1
        }
        return index > start ? Array(bytes[start..<index]) : nil
    }

    /// A decimal number of exactly `digits` digits (at most 4: no overflow).
    mutating func number(digits: ClosedRange<Int>) -> Int64? {
        var value: Int64 = 0, count = 0
        while index < bytes.count, count < digits.upperBound, (0x30...0x39).contains(bytes[index]) {
            value = value * 10 + Int64(bytes[index] - 0x30)
            index += 1
            count += 1
        }
        return digits.contains(count) ? value : nil
    }

    /// A three-letter month name (case-insensitive), 1…12.
    mutating func month() -> Int64? {
        guard let name = word(), name.count == 3 else { return nil }
        let lower = String(decoding: name.map { $0 | 0x20 }, as: UTF8.self)
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return months.firstIndex(of: lower).map { Int64($0) + 1 }
    }

    /// `HH:MM:SS`.
    mutating func timeOfDay() -> (Int64, Int64, Int64)? {
        guard let hour = number(digits: 2...2), consume(UInt8(ascii: ":")),
              let minute = number(digits: 2...2), consume(UInt8(ascii: ":")),
              let second = number(digits: 2...2) else { return nil }
        return (hour, minute, second)
    }

    /// `GMT` (case-sensitive, as the grammar says; `UTC` is accepted too, as browsers do).
    mutating func consumeGMT() -> Bool {
        guard let zone = word() else { return false }
        return zone == Array("GMT".utf8) || zone == Array("UTC".utf8)
    }
}
