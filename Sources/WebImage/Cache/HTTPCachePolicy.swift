import Foundation

/// The HTTP caching facts of a response, kept with the cached bytes as extended data: validators (`ETag`,
/// `Last-Modified`) and freshness (`Cache-Control: max-age`, `no-cache`, `no-store`, `Expires`, `Date`).
///
/// - Important: A value type; thread-safe.
public struct HTTPCachePolicy: Sendable, Hashable, Codable {
    /// `ETag` as sent by the server (quotes kept), for `If-None-Match`.
    public var etag: String?
    /// `Last-Modified` as sent by the server, for `If-Modified-Since`.
    public var lastModified: String?
    /// `Cache-Control: max-age` in seconds (`s-maxage` is for shared caches and ignored).
    public var maxAge: Double?
    /// `Expires` as an absolute time, when there is no max-age.
    public var expires: Date?
    /// `no-cache`: always revalidate before use.
    public var mustRevalidate: Bool
    /// `no-store`: never store.
    public var noStore: Bool
    /// When the response was received (or, for a 304, when it was last revalidated).
    public var fetchDate: Date

    /// Makes a policy.
    public init(etag: String? = nil, lastModified: String? = nil, maxAge: Double? = nil, expires: Date? = nil,
                mustRevalidate: Bool = false, noStore: Bool = false, fetchDate: Date = Date()) {
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.expires = expires
        self.mustRevalidate = mustRevalidate
        self.noStore = noStore
        self.fetchDate = fetchDate
    }

    /// Reads the policy from response headers (names matched case-insensitively).
    public init(headers: [String: String], fetchDate: Date = Date()) {
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        self.init(fetchDate: fetchDate)
        etag = header("ETag")
        lastModified = header("Last-Modified")
        if let cacheControl = header("Cache-Control") {
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                }
                switch parts[0] {
                case "max-age": if parts.count == 2, let seconds = Double(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) { maxAge = max(0, seconds) }
                case "no-cache": mustRevalidate = true
                case "no-store": noStore = true
                default: break
                }
            }
        }
        if maxAge == nil, let value = header("Expires") {
            // An invalid Expires (e.g. "0") means already expired (RFC 9111 §5.3).
            expires = HTTPCachePolicy.parseHTTPDate(value) ?? .distantPast
        }
    }

    /// Whether the server gave anything to revalidate with.
    public var hasValidators: Bool { etag != nil || lastModified != nil }

    /// Whether the cached bytes may be used at `now` without asking the server.
    public func isFresh(at now: Date = Date()) -> Bool {
        if mustRevalidate || noStore { return false }
        if let maxAge { return now.timeIntervalSince(fetchDate) < maxAge }
        if let expires { return now < expires }
        return false
    }

    /// Headers for a conditional request revalidating the cached bytes.
    public var conditionalHeaders: [String: String] {
        var headers: [String: String] = [:]
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
        return headers
    }

    /// This policy after a 304 Not Modified: the new response's freshness and validators replace the old
    /// ones where given, and the fetch date becomes now.
    public func refreshed(with headers: [String: String], at date: Date = Date()) -> HTTPCachePolicy {
        let update = HTTPCachePolicy(headers: headers, fetchDate: date)
        var merged = self
        merged.fetchDate = date
        if update.etag != nil { merged.etag = update.etag }
        if update.lastModified != nil { merged.lastModified = update.lastModified }
        if update.maxAge != nil || update.expires != nil || update.mustRevalidate {
            merged.maxAge = update.maxAge
            merged.expires = update.expires
            merged.mustRevalidate = update.mustRevalidate
        }
        return merged
    }

    /// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime).
    public static func parseHTTPDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }
}
