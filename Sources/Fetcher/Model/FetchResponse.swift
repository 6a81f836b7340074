import Foundation

/// The response head of a fetch: final URL, status, headers and expected body length.
///
/// A value type; Sendable.
public struct FetchResponse: Sendable, Hashable {
    /// The final URL, after redirects.
    public var url: URL
    /// The HTTP status of the final response; nil for `file://` URLs.
    public var statusCode: Int?
    /// The headers of the final response, in order (names as sent by the server).
    public var headers: [Header]
    /// The body length announced by the server (`Content-Length`) or the file size; nil when unknown
    /// (chunked, or content-encoded so the decoded length differs).
    public var expectedContentLength: Int64?
    /// The HTTP version the final response came with: `"HTTP/1.0"`, `"HTTP/1.1"`, `"HTTP/2"` or `"HTTP/3"`;
    /// nil for `file://` URLs and when libcurl does not say.
    public var httpVersion: String?
    /// The redirect responses that led to this one, first hop first (their URL, status and headers); empty
    /// when the request was not redirected. Each hop's own freshness matters to a cache (a 302 with no
    /// `max-age` must not be cached for the `max-age` of its target).
    public var redirects: [FetchResponse]

    /// One header field.
    public struct Header: Sendable, Hashable {
        /// The field name, as sent.
        public var name: String
        /// The field value, trimmed.
        public var value: String
        /// A header field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A response head; `httpVersion` defaults to nil (unknown).
    public init(url: URL, statusCode: Int?, headers: [Header], expectedContentLength: Int64?,
                httpVersion: String? = nil, redirects: [FetchResponse] = []) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
        self.httpVersion = httpVersion
        self.redirects = redirects
    }

    /// The value of the first header named `name` (case-insensitive), or nil. O(number of headers).
    public func value(forHeader name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of the headers named `name` (case-insensitive), e.g. all `Set-Cookie` lines.
    public func values(forHeader name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }
}

/// A finished fetch: the response head and the whole body (decoded when content-encoded). Coalesced callers
/// share one body buffer (copy-on-write `Data`). A value type; Sendable.
public struct FetchResult: Sendable, Hashable {
    /// The response head.
    public var response: FetchResponse
    /// The body.
    public var body: Data

    /// A result.
    public init(response: FetchResponse, body: Data) {
        self.response = response
        self.body = body
    }
}
