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
    /// On a redirect to another origin, `Authorization` and `Cookie` are not sent; to another host, a custom `Host`
    /// is not sent either (as libcurl does when it follows redirects itself).
    public var headers: [String: String]
    /// Seconds the whole transfer (connect, redirects, body) may take: a deadline, however fast bytes flow.
    /// 60 s by default (a 64 MiB image at 9 Mbit/s); a stalled transfer ends sooner, at `inactivityTimeout`.
    public var timeout: Double
    /// Seconds a transfer may go receiving less than one byte per second on average (libcurl's
    /// `CURLOPT_LOW_SPEED_LIMIT`/`_TIME`) before it fails with `timedOut`: an inactivity timeout, the kind
    /// URLSession's `timeoutIntervalForRequest` is (Kingfisher's and SDWebImage's 15 s). A large image on a
    /// slow but flowing link finishes; a stalled one stops. 15 s by default; nil for none (then only
    /// `timeout` ends a stall).
    public var inactivityTimeout: Double?
    /// TLS trust and identity: a private CA, pinned keys, a client certificate. `TLSOptions()` (the system's
    /// CAs, nothing pinned) by default.
    public var tls: TLSOptions
    /// Basic-auth credentials, sent to the request's own origin only (not after a redirect to another one). None
    /// by default.
    public var credentials: Credentials?
    /// Whether cookies set by responses are stored (in the network thread's shared cookie jar, in memory) and
    /// sent with later requests that also enable cookies. False by default.
    public var handlesCookies: Bool
    /// Whether TLS certificates that fail verification (self-signed, wrong host, expired) are accepted.
    /// False by default; true only for tests and trusted hosts.
    public var allowsInvalidCertificates: Bool
    /// The largest body accepted, in bytes, counted after `Content-Encoding` decoding (a gzip bomb stops at the
    /// limit, not at its wire size) and enforced as bytes arrive; a `Content-Length` over it is refused before
    /// the body; a `file` URL is checked by its size before reading. Exceeding it is
    /// `FetchError.responseTooLarge`. `defaultMaximumResponseSize` (64 MiB, less on small machines) by
    /// default; nil means no limit, and only when set so explicitly.
    public var maximumResponseSize: Int64?
    /// How many redirects are followed; one more is `FetchError.tooManyRedirects`. 10 by default (imgproxy's;
    /// libcurl's own default is unlimited).
    public var maximumRedirects: Int
    /// Seconds the connection (DNS, TCP, TLS) may take, within `timeout`. 10 s by default (libcurl's own
    /// default is 300 s); the smaller of this and `timeout` applies.
    public var connectTimeout: Double
    /// Which addresses the transfer may connect to. `.allowAll` by default (every redirect hop and DNS answer
    /// is checked under `.publicOnly`; see `SourcePolicy`).
    public var sourcePolicy: SourcePolicy
    /// Whether a `file` URL is read (by the fetcher's own reader: regular files only, never through libcurl).
    /// When false, a `file` URL fails with `FetchError.fileURLRefused`. True by default. A redirect to `file:`
    /// is refused either way.
    public var allowsFileURLs: Bool
    /// Pinned name resolutions, libcurl's `CURLOPT_RESOLVE` format `host:port:address` (e.g.
    /// `images.example:443:93.184.216.34`). Empty by default. Meant for tests and split-horizon setups.
    ///
    /// - Important: libcurl keeps these in the network thread's DNS cache, so later transfers to the same
    ///   host and port on that thread may use them too. The source policy still checks the address.
    public var resolveOverrides: [String]
    /// The queue priority. `.normal` by default.
    public var priority: FetchPriority
    /// Opt-in to the queue's failed-URL list: a listed URL fails at once with `FetchError.inFailedURLList`,
    /// and a non-transient failure of this request lists its URL. False by default.
    public var usesFailedURLList: Bool

    /// A GET of `url` with the defaults above.
    public init(url: URL, headers: [String: String] = [:], timeout: Double = 60, priority: FetchPriority = .normal) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.inactivityTimeout = 15
        self.tls = TLSOptions()
        self.credentials = nil
        self.handlesCookies = false
        self.allowsInvalidCertificates = false
        self.maximumResponseSize = Self.defaultMaximumResponseSize
        self.maximumRedirects = 10
        self.connectTimeout = 10
        self.sourcePolicy = .allowAll
        self.allowsFileURLs = true
        self.resolveOverrides = []
        self.priority = priority
        self.usesFailedURLList = false
    }

    /// The default `maximumResponseSize`: 64 MiB, or a tenth of physical memory when that is less (Nuke caps
    /// downloads at min(200 MB, 10 % of RAM)). Smaller than Nuke's so that a process fetching a hostile
    /// source with default settings stays well under 200 MB (the body buffer never grows past the limit).
    public static let defaultMaximumResponseSize: Int64 = {
        let pages = Int64(sysconf(Int32(_SC_PHYS_PAGES))), pageSize = Int64(sysconf(Int32(_SC_PAGESIZE)))
        let tenth = pages > 0 && pageSize > 0 ? pages * pageSize / 10 : Int64.max
        return min(64 << 20, max(1 << 20, tenth))
    }()

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
