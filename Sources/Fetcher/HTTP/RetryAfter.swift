import Foundation

/// `Retry-After` (RFC 9110 §10.2.3): a delay in seconds or an HTTP date.
///
/// - Important: Pure functions; thread-safe.
public enum RetryAfter {
    /// The delay the value asks for, in seconds from `now` (never negative); nil when the value is neither
    /// `delta-seconds` nor an HTTP date. Never traps.
    public static func delay(_ text: some StringProtocol, now: Date = Date()) -> Double? {
        if let seconds = DeltaSeconds.parse(text) { return Double(seconds) }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
