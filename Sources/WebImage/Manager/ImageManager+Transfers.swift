import Fetcher

/// The bounds of every transfer the manager starts, and where it may connect. Each is copied into the
/// `FetchRequest` of each new request (a request in flight keeps the values it started with).
extension ImageManager {
    /// The largest response accepted, in bytes, counted after `Content-Encoding` decoding and enforced as bytes
    /// arrive (a declared `Content-Length` over it is refused before the body; a file over it is not read).
    /// `FetchRequest.defaultMaximumResponseSize` (64 MiB, or a tenth of physical memory if less) by default;
    /// nil means no limit. Thread-safe.
    public var maximumResponseSize: Int64? {
        get { configuration.withLock { $0.maximumResponseSize } }
        set { configuration.withLock { $0.maximumResponseSize = newValue } }
    }

    /// Seconds a transfer may receive less than one byte per second before it fails with `timedOut` (an
    /// inactivity timeout, as Kingfisher's and SDWebImage's are): a large image on a slow but flowing link
    /// finishes, a stalled one stops. 15 by default; nil for none. `timeout` bounds the whole transfer.
    /// Thread-safe.
    public var inactivityTimeout: Double? {
        get { configuration.withLock { $0.inactivityTimeout } }
        set { configuration.withLock { $0.inactivityTimeout = newValue } }
    }

    /// TLS trust and identity for every transfer: a private CA (`caBundlePath`, `caDirectoryPath`), pinned
    /// public keys, a client certificate. `TLSOptions()` (the system's CAs) by default. Thread-safe.
    public var tls: TLSOptions {
        get { configuration.withLock { $0.tls } }
        set { configuration.withLock { $0.tls = newValue } }
    }

    /// Seconds a connection (DNS, TCP, TLS) may take, within `timeout`. 10 by default. Thread-safe.
    public var connectTimeout: Double {
        get { configuration.withLock { $0.connectTimeout } }
        set { configuration.withLock { $0.connectTimeout = newValue } }
    }

    /// Redirects followed at most per request; one more fails with `FetchError.tooManyRedirects`. 10 by
    /// default. Thread-safe.
    public var maximumRedirects: Int {
        get { configuration.withLock { $0.maximumRedirects } }
        set { configuration.withLock { $0.maximumRedirects = newValue } }
    }

    /// Which addresses transfers may connect to: `.allowAll` by default; `.publicOnly` (optionally with an
    /// allow-list) for services loading URLs they do not control. Checked on the address actually connected,
    /// on every redirect hop (see `SourcePolicy`). Thread-safe.
    public var sourcePolicy: SourcePolicy {
        get { configuration.withLock { $0.sourcePolicy } }
        set { configuration.withLock { $0.sourcePolicy = newValue } }
    }

    /// Whether `file` URLs are loaded (regular files only, by the fetcher's own reader). True by default; when
    /// false they fail with `FetchError.fileURLRefused`. Thread-safe.
    public var allowsFileURLs: Bool {
        get { configuration.withLock { $0.allowsFileURLs } }
        set { configuration.withLock { $0.allowsFileURLs = newValue } }
    }
}
