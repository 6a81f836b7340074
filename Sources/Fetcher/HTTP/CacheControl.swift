/// The directives of a response's `Cache-Control` (RFC 9111 §5.2.2) that a private cache acts on.
///
///     let control = CacheControl(fieldValues: response.values(forHeader: "Cache-Control"))
///     control.maxAge      // 600 for "public, max-age=600"
///
/// Every `Cache-Control` field line of the response is one list (RFC 9110 §5.3): `no-store` on one line and
/// `max-age=600` on another means both. Directive names are case-insensitive. A `max-age` that is malformed
/// (`max-age=`, `max-age=-1`, `max-age=1.5`) or given twice with different values makes the response stale
/// (`maxAge` 0), as RFC 9111 §4.2.1 allows; a value too large reads as 2^31. A quoted value (`max-age="60"`)
/// is read like a token. Unknown directives and malformed elements are skipped, never fatal.
///
/// - Important: A value type; thread-safe.
public struct CacheControl: Sendable, Hashable {
    /// `max-age` in seconds; nil when absent.
    public var maxAge: Int?
    /// `no-cache` (qualified or not: a qualified one is treated as unqualified, as RFC 9111 §5.2.2.4 allows):
    /// revalidate before every use.
    public var noCache: Bool
    /// `no-store`: do not store the response.
    public var noStore: Bool
    /// `must-revalidate`: once stale, never use without revalidating.
    public var mustRevalidate: Bool
    /// `immutable` (RFC 8246): the body will not change while fresh.
    public var immutable: Bool
    /// How many list elements did not parse (for logs and tests).
    public var malformedCount: Int

    /// Reads the directives of every field line given (pass all `Cache-Control` lines of the response).
    public init(fieldValues: [String]) {
        let (elements, malformed) = HTTPFieldList.elements(of: fieldValues)
        maxAge = nil
        noCache = false
        noStore = false
        mustRevalidate = false
        immutable = false
        malformedCount = malformed
        var maxAgeIsInvalid = false
        for element in elements {
            switch element.name {
            case "max-age":
                guard let seconds = element.argument.flatMap(DeltaSeconds.parse) else {
                    maxAgeIsInvalid = true
                    continue
                }
                if let earlier = maxAge, earlier != seconds { maxAgeIsInvalid = true }
                maxAge = seconds
            case "no-cache": noCache = true
            case "no-store": noStore = true
            // `proxy-revalidate` is `must-revalidate` for shared caches only (§5.2.2.8): ignored, as `s-maxage` is.
            case "must-revalidate": mustRevalidate = true
            case "immutable": immutable = true
            default: continue
            }
        }
        if maxAgeIsInvalid { maxAge = 0 }
    }
}
