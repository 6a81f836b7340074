import Foundation

/// What to fetch and how: an http, https or file URL plus the transfer's knobs.
///
///     var request = FetchRequest(url: url)
///     request.timeout = 5
///     request.headers["If-None-Match"] = etag
///
/// A value type; Sendable.
public struct FetchRequest: Sendable, Hashable {
    /// The `Accept` header sent unless `headers` sets one: `image/webp,image/apng,image/*;q=0.8`.
    public static let defaultAccept = "image/webp,image/apng,image/*;q=0.8"

    /// User name and password for HTTP Basic authentication.
    public struct Credentials: Sendable, Hashable {
        /// The user name.
        public var user: String
        /// The password.
        public var password: String
        /// Credentials for Basic authentication.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// The URL: `http`, `https` or `file`.
    public var url: URL
    /// Extra request headers (name → value). `Accept` defaults to `defaultAccept` when absent. Empty by default.
    public var headers: [String: String]
    /// Seconds the whole transfer (connect, redirects, body) may take. 15 s by default.
    public var timeout: Double
    /// Basic-auth credentials. None by default.
    public var credentials: Credentials?
    /// Whether cookies set by responses are stored (in the network thread's shared cookie jar, in memory) and
    /// sent with later requests that also enable cookies. False by default.
    public var handlesCookies: Bool
    /// Whether TLS certificates that fail verification (self-signed, wrong host, expired) are accepted.
    /// False by default; true only for tests and trusted hosts.
    public var allowsInvalidCertificates: Bool
    /// The largest body accepted, in bytes, after content decoding; a larger one stops the transfer with
    /// `FetchError.responseTooLarge`. No limit (nil) by default.
    public var maximumResponseSize: Int64?
    /// How many redirects are followed; one more is `FetchError.tooManyRedirects`. 10 by default.
    public var maximumRedirects: Int
    /// The queue priority. `.normal` by default.
    public var priority: FetchPriority
    /// Opt-in to the queue's failed-URL list: a listed URL fails at once with `FetchError.inFailedURLList`,
    /// and a non-transient failure of this request lists its URL. False by default.
    public var usesFailedURLList: Bool

    /// A GET of `url` with the defaults above.
    public init(url: URL, headers: [String: String] = [:], timeout: Double = 15, priority: FetchPriority = .normal) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.credentials = nil
        self.handlesCookies = false
        self.allowsInvalidCertificates = false
        self.maximumResponseSize = nil
        self.maximumRedirects = 10
        self.priority = priority
        self.usesFailedURLList = false
    }

    /// The header lines sent, `Accept` first (the default unless overridden), names as given.
    var headerLines: [String] {
        var lines: [String] = []
        if !headers.keys.contains(where: { $0.caseInsensitiveCompare("Accept") == .orderedSame }) {
            lines.append("Accept: \(Self.defaultAccept)")
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            lines.append("\(name): \(value)")
        }
        return lines
    }
}
