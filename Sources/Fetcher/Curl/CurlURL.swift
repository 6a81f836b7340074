internal import CWebImageCurl

/// The parts of a URL as libcurl reads them (its URL API: `curl_url`, `curl_url_set`, `curl_url_get`).
///
/// Whatever decides which host a transfer may reach must read the URL with the parser that will connect
/// to it: Foundation's `URL` and libcurl disagree on odd inputs (backslashes, `@` in odd places, spaces,
/// percent-encoded hosts), and an attacker picks exactly those. So the fetcher checks hosts from here.
///
/// - Important: A value type; thread-safe (each parse makes and frees its own `CURLU`).
struct CurlURL: Equatable {
    /// The scheme, lowercased.
    var scheme: String
    /// The host, percent-decoded and lowercased (an IPv6 address in brackets).
    var host: String
    /// The port, explicit or the scheme's default.
    var port: Int

    /// Parses `text` as libcurl would for a transfer (wraps `curl_url_set(CURLUPART_URL)` with
    /// `CURLU_NON_SUPPORT_SCHEME`); nil when libcurl refuses it or it has no host.
    init?(_ text: String) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
              let scheme = Self.part(handle, CURLUPART_SCHEME, flags: 0),
              let host = Self.part(handle, CURLUPART_HOST, flags: UInt32(CURLU_URLDECODE)), !host.isEmpty,
              let port = Self.part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap(Int.init)
        else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port
    }

    /// A redirect's target as libcurl reads it when it follows redirects itself (`Curl_follow`): `location`
    /// resolved against `base` with `CURLU_URLENCODE | CURLU_ALLOW_SPACE`, so a space or a non-ASCII byte in a
    /// `Location` is percent-encoded (as browsers do) rather than making the target unreadable. Unsupported
    /// schemes parse too (`CURLU_NON_SUPPORT_SCHEME`), for the caller to refuse by name. Nil when libcurl cannot
    /// read it.
    static func resolvingRedirect(_ location: String, against base: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        let followFlags = UInt32(CURLU_NON_SUPPORT_SCHEME) | UInt32(CURLU_URLENCODE) | UInt32(CURLU_ALLOW_SPACE)
        guard curl_url_set(handle, CURLUPART_URL, base, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_URL, location, followFlags) == CURLUE_OK else { return nil }
        return part(handle, CURLUPART_URL, flags: 0)
    }

    /// The host as `SourcePolicy.allowsHost` compares it: without the brackets of an IPv6 address.
    var hostForPolicy: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// Whether `other` is the same origin (scheme, host and port), as libcurl decides whether credentials may
    /// follow a redirect.
    func isSameOrigin(as other: CurlURL) -> Bool { self == other }

    private static func part(_ handle: OpaquePointer, _ part: CURLUPart, flags: UInt32) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &value, flags) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
