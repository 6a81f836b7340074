import Fetcher
import Foundation
import KVCache

/// The HTTP caching facts of a response, kept with the cached bytes as extended data: validators (`ETag`,
/// `Last-Modified`) and freshness (`Cache-Control`, `Expires`, `Date`, `Age`, and the redirects that led to
/// the response), read and applied as RFC 9111 says for a private cache.
///
/// - Freshness lifetime (§4.2.1): `max-age`, else `Expires − Date` (the origin's clock on both sides, so a
///   client whose clock is off still gets the lifetime the origin meant), else none: no heuristic freshness.
/// - Age (§4.2.3): the larger of the apparent age (receipt time − `Date`) and `Age`, plus the time since
///   receipt. A response already 59 s old with `max-age=60` is fresh for one more second.
/// - Every `Cache-Control` line counts (RFC 9110 §5.3): `no-store` on one line and `max-age=600` on another
///   is not stored. A malformed or conflicting `max-age`, or an invalid `Expires`, means stale.
/// - Redirects: an entry reached through redirects is fresh only while every redirect is too (a 302 without
///   `max-age` is revalidated every time, so the endpoint can point elsewhere later).
/// - `Vary` (§4.1): the request's values of the fields it names are kept (`variedRequestFields`); a later request
///   whose values differ, or any request after `Vary: *`, revalidates (`matchesVary(requestHeaders:)`).
///
/// - Important: A value type; thread-safe.
public struct HTTPCachePolicy: Sendable, Hashable, Codable {
    /// `ETag` as sent by the server (quotes kept), for `If-None-Match`; only a valid entity tag of at most
    /// `EntityTag.maximumLength` bytes is kept.
    public var etag: String?
    /// `Last-Modified` as sent by the server, for `If-Modified-Since`; only a valid HTTP date is kept.
    public var lastModified: String?
    /// `Cache-Control: max-age` in seconds (`s-maxage` is for shared caches and ignored).
    public var maxAge: Double?
    /// `Expires`, when there is no max-age (an invalid one is `distantPast`: already expired).
    public var expires: Date?
    /// `no-cache`: always revalidate before use.
    public var mustRevalidate: Bool
    /// `no-store`: never store.
    public var noStore: Bool
    /// When the response was received (or, for a 304, when it was last revalidated), by the local clock.
    public var fetchDate: Date
    /// The response's `Date` (the origin's clock); nil when absent or invalid (the receipt time stands in).
    public var date: Date?
    /// The response's `Age` in seconds (time it already spent in caches upstream); nil when absent.
    public var age: Double?
    /// How long, from `fetchDate`, the redirects that led to the response stay fresh (the least of theirs; 0
    /// for a redirect with no explicit freshness); nil when the response was not redirected.
    public var redirectFreshness: Double?
    /// A fingerprint of the value the request that produced the response had for each field its `Vary` names
    /// (lowercased names; `nil` for a field the request did not send; `["*": nil]` for `Vary: *`); nil when the
    /// response had no `Vary`. Fingerprints, not the values: `Vary: Authorization` or `Cookie` must not put the
    /// request's credentials in the disk metadata or the fleet's shared tier (only equality is needed; browsers
    /// keep digests too). Set by `recordVary(of:requestHeaders:)`.
    public var variedRequestFields: [String: String?]?

    /// Makes a policy.
    public init(etag: String? = nil, lastModified: String? = nil, maxAge: Double? = nil, expires: Date? = nil,
                mustRevalidate: Bool = false, noStore: Bool = false, fetchDate: Date = Date(),
                date: Date? = nil, age: Double? = nil, redirectFreshness: Double? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.expires = expires
        self.mustRevalidate = mustRevalidate
        self.noStore = noStore
        self.fetchDate = fetchDate
        self.date = date
        self.age = age
        self.redirectFreshness = redirectFreshness
    }

    /// Reads the policy of a response: every header line (repeated `Cache-Control` lines merged) and each
    /// redirect that led to it.
    public init(response: FetchResponse, fetchDate: Date = Date()) {
        self.init(fields: response.headers, fetchDate: fetchDate)
        guard !response.redirects.isEmpty else { return }
        redirectFreshness = response.redirects.map { hop in
            HTTPCachePolicy(fields: hop.headers, fetchDate: fetchDate).remainingFreshness ?? 0
        }.min()
    }

    /// Reads the policy from response headers (names matched case-insensitively). A dictionary holds one
    /// value per name: prefer `init(response:fetchDate:)`, which sees every line.
    public init(headers: [String: String], fetchDate: Date = Date()) {
        self.init(fields: headers.map { FetchResponse.Header(name: $0.key, value: $0.value) }, fetchDate: fetchDate)
    }

    /// Reads the policy from header fields, in order. Never traps, whatever the values.
    init(fields: [FetchResponse.Header], fetchDate: Date) {
        self.init(fetchDate: fetchDate)
        let view = HeaderView(fields: fields)
        etag = view.first("ETag").flatMap(EntityTag.parse)
        lastModified = view.first("Last-Modified").flatMap { HTTPDate.parse($0) == nil ? nil : $0 }
        let control = CacheControl(fieldValues: view.all("Cache-Control"))
        maxAge = control.maxAge.map(Double.init)
        mustRevalidate = control.noCache
        noStore = control.noStore
        date = view.first("Date").flatMap(HTTPDate.parse)
        age = view.all("Age").compactMap(DeltaSeconds.parse).max().map(Double.init)
        if maxAge == nil, view.has("Expires") {
            // An invalid Expires (e.g. "0"), or several that disagree, mean already expired (RFC 9111 §5.3, §4.2.1).
            let dates = view.all("Expires").map(HTTPDate.parse)
            if let first = dates.first ?? nil, dates.allSatisfy({ $0 == first }) { expires = first } else { expires = .distantPast }
        }
    }

    /// Records which request fields the response varies on (every `Vary` line of `response`) and the values
    /// `requestHeaders` (the request that produced it) had for them. A response without `Vary` clears them.
    public mutating func recordVary(of response: FetchResponse, requestHeaders: [String: String]) {
        let names = HeaderView(fields: response.headers).all("Vary")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
        guard !names.isEmpty else { variedRequestFields = nil; return }
        if names.contains("*") { variedRequestFields = ["*": nil]; return }
        var fields: [String: String?] = [:]
        for name in names { fields[name] = Self.value(of: name, in: requestHeaders) }
        variedRequestFields = fields
    }

    /// After a 304 answering a request with `requestHeaders`: a `Vary` the 304 sends replaces the stored one;
    /// else the stored field names are kept with this request's values (the origin validated the bytes for it),
    /// and `Vary: *` stays.
    public mutating func updateVary(after notModified: FetchResponse, requestHeaders: [String: String]) {
        if HeaderView(fields: notModified.headers).has("Vary") {
            recordVary(of: notModified, requestHeaders: requestHeaders)
            return
        }
        guard let names = variedRequestFields?.keys, !names.contains("*") else { return }
        var fields: [String: String?] = [:]
        for name in names { fields[name] = Self.value(of: name, in: requestHeaders) }
        variedRequestFields = fields
    }

    /// Whether a request with `requestHeaders` may use the stored response without asking the origin as far as
    /// `Vary` goes (RFC 9111 §4.1): always without `Vary`; never after `Vary: *`; else when each varied field has
    /// the value (whitespace around it trimmed) the stored request had, or is absent from both. Pure.
    public func matchesVary(requestHeaders: [String: String]) -> Bool {
        guard let variedRequestFields else { return true }
        for (name, stored) in variedRequestFields {
            if name == "*" || Self.value(of: name, in: requestHeaders) != stored { return false }
        }
        return true
    }

    /// The fingerprint of `name`'s (lowercased) value in `headers` (names compared case-insensitively, the value
    /// trimmed): the MD5 of the name and value, in hex; nil if absent. Not a secret's protection against a search
    /// of low-entropy values, but a stored token or cookie is no longer readable as such.
    private static func value(of name: String, in headers: [String: String]) -> String? {
        guard let value = headers.first(where: { $0.key.lowercased() == name })?.value else { return nil }
        return MD5.hex("webimage-vary\u{0}" + name + "\u{0}" + value.trimmingCharacters(in: .whitespaces))
    }

    /// Whether a response with `status` is a whole representation a cache may store (RFC 9111 §3, §3.3): 200 or
    /// 203, or no HTTP status (file and data URLs: nil or 0). A 206, or any other success, is delivered, not stored.
    public static func isStorable(status: Int?) -> Bool {
        status.map { [0, 200, 203].contains($0) } ?? true
    }

    /// Whether the server gave anything to revalidate with.
    public var hasValidators: Bool { etag != nil || lastModified != nil }

    /// The freshness lifetime (RFC 9111 §4.2.1): `max-age`, else `Expires − Date`; nil when the response
    /// gives none.
    public var freshnessLifetime: Double? {
        if let maxAge { return maxAge }
        if let expires { return expires.timeIntervalSince(date ?? fetchDate) }
        return nil
    }

    /// The response's age when it was received (RFC 9111 §4.2.3's corrected initial age, with no request delay
    /// counted): the larger of receipt time − `Date` and `Age`.
    public var initialAge: Double {
        max(0, fetchDate.timeIntervalSince(date ?? fetchDate), age ?? 0)
    }

    /// The response's age at `now`: its initial age plus the time since it was received.
    public func currentAge(at now: Date = Date()) -> Double {
        initialAge + max(0, now.timeIntervalSince(fetchDate))
    }

    /// Whether the cached bytes may be used at `now` without asking the server.
    public func isFresh(at now: Date = Date()) -> Bool {
        if mustRevalidate || noStore { return false }
        guard let lifetime = freshnessLifetime, currentAge(at: now) < lifetime else { return false }
        if let redirectFreshness, max(0, now.timeIntervalSince(fetchDate)) >= redirectFreshness { return false }
        return true
    }

    /// Seconds of freshness left when the response was received; nil without an explicit lifetime (or with
    /// `no-cache`/`no-store`).
    var remainingFreshness: Double? {
        guard !mustRevalidate, !noStore, let lifetime = freshnessLifetime else { return nil }
        return max(0, lifetime - initialAge)
    }

    /// Headers for a conditional request revalidating the cached bytes.
    public var conditionalHeaders: [String: String] {
        var headers: [String: String] = [:]
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
        return headers
    }

    /// Whether a 304 Not Modified answering a revalidation of the stored bytes may freshen them (RFC 9111
    /// §4.3.4): not when it names an entity tag other than the stored one (compared weakly, as `If-None-Match`
    /// is). The origin then says another representation is current, and the stored bytes are not it ("If none of
    /// the stored responses contain the same strong validator, then the cache MUST NOT use the new response to
    /// update any stored responses"); the caller fetches the bytes again. A 304 without a valid `ETag`, or a
    /// stored response without one, is taken as the answer to the request's own conditions. Pure.
    public func canBeFreshened(by notModified: FetchResponse) -> Bool {
        guard let stored = etag,
              let sent = HeaderView(fields: notModified.headers).first("ETag").flatMap(EntityTag.parse) else { return true }
        func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
        return opaque(stored) == opaque(sent)
    }

    /// This policy after a 304 Not Modified (RFC 9111 §4.3.4): the 304's fields replace the stored ones they
    /// name (`Cache-Control` as a whole, `Expires`, the validators), its `Date`, `Age` and redirects are the new
    /// ones, and the fetch date becomes `date`.
    public func refreshed(with response: FetchResponse, at date: Date = Date()) -> HTTPCachePolicy {
        let update = HTTPCachePolicy(response: response, fetchDate: date)
        let view = HeaderView(fields: response.headers)
        var merged = self
        merged.fetchDate = date
        merged.date = update.date
        merged.age = update.age
        merged.redirectFreshness = update.redirectFreshness
        if update.etag != nil { merged.etag = update.etag }
        if update.lastModified != nil { merged.lastModified = update.lastModified }
        if view.has("Cache-Control") {
            merged.maxAge = update.maxAge
            merged.mustRevalidate = update.mustRevalidate
            merged.noStore = update.noStore
        }
        if view.has("Expires") { merged.expires = update.expires }
        return merged
    }

    /// This policy after a 304 whose headers are given as a dictionary (one value per name).
    public func refreshed(with headers: [String: String], at date: Date = Date()) -> HTTPCachePolicy {
        let fields = headers.map { FetchResponse.Header(name: $0.key, value: $0.value) }
        return refreshed(with: FetchResponse(url: URL(fileURLWithPath: "/"), statusCode: 304, headers: fields,
                                             expectedContentLength: nil), at: date)
    }

    /// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime); nil when invalid. See `HTTPDate`.
    public static func parseHTTPDate(_ text: String) -> Date? {
        HTTPDate.parse(text)
    }
}

/// Case-insensitive look-ups in an ordered list of header fields.
private struct HeaderView {
    let fields: [FetchResponse.Header]

    func all(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    func first(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    func has(_ name: String) -> Bool { first(name) != nil }
}
