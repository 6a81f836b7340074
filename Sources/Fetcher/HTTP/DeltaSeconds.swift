/// `delta-seconds` (RFC 9111 §1.2.2): a non-negative whole number of seconds, used by `max-age`, `Age` and
/// `Retry-After`.
///
/// - Important: Pure functions; thread-safe.
public enum DeltaSeconds {
    /// The largest value kept: a larger one (or one that would overflow) reads as 2^31, as the RFC says.
    public static let maximum = 2_147_483_648

    /// Parses `1*DIGIT`; nil for anything else (a sign, a fraction, spaces inside, nothing at all). Surrounding
    /// spaces and tabs are ignored. Never traps, however long the digits run.
    public static func parse(_ text: some StringProtocol) -> Int? {
        var value = 0, sawDigit = false
        for byte in text.utf8.trimmingHTTPWhitespace() {
            guard (0x30...0x39).contains(byte) else { return nil }
            sawDigit = true
            if value < maximum { value = min(maximum, value * 10 + Int(byte - 0x30)) }
        }
        return sawDigit ? value : nil
    }
}

extension Collection where Element == UInt8 {
    /// The bytes without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingHTTPWhitespace() -> SubSequence {
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let start = firstIndex(where: { !isWhitespace($0) }) else { return self[endIndex...] }
        var end = start
        var index = start
        while index != endIndex {
            if !isWhitespace(self[index]) { end = self.index(after: index) }
            index = self.index(after: index)
        }
        return self[start..<end]
    }
}
