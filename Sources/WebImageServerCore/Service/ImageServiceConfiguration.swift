import Fetcher
import Foundation
import ImageCodec
import WebImage

/// The settings of an `ImageService`. Safe by default: public source addresses only, no `file` URLs, bounded
/// responses and decodes, a maximum output size, a concurrency limit, signed URLs required.
///
/// ```swift
/// var configuration = ImageServiceConfiguration(cacheDirectory: "/var/cache/webimage-server")
/// configuration.signingKey = Array("secret".utf8)
/// configuration.allowedHosts = ["images.example.com"]
/// let service = try ImageService(configuration: configuration)
/// ```
///
/// - Important: A value type; thread-safe.
public struct ImageServiceConfiguration: Sendable {
    /// The folder of the caches: `originals/` (source bytes, an `ImageCache`) and `results/` (encoded outputs).
    public var cacheDirectory: String
    /// The HMAC-SHA256 keys of `sig`, each at least 16 bytes: a signature made with any of them is accepted, so
    /// keys rotate without downtime (add the new key, move the signers over, remove the old one). A response never
    /// says which key matched. Empty (the default): none (then `allowsUnsigned` must be true).
    public var signingKeys: [[UInt8]] = []
    /// The first of `signingKeys`, or `nil`; setting it replaces them all with this one key (`nil`: none).
    public var signingKey: [UInt8]? {
        get { signingKeys.first }
        set { signingKeys = newValue.map { [$0] } ?? [] }
    }
    /// Named option sets requests use as `preset=NAME` (`--preset`). Default none. A later preset of the same name
    /// replaces an earlier one.
    public var presets: [ImagePreset] = []
    /// Serve presets only: a request may give `url`, `preset` and `sig` and nothing else (`--presets-only`), so no
    /// client can ask for a size or an effect nobody configured. Default `false`.
    public var presetsOnly = false
    /// The sizes a request's own `w`/`h` may name (`--allowed-sizes 400x300,800x0`); sizes from presets are not
    /// checked. Empty (the default): any size up to the output limits.
    public var allowedSizes: [AllowedSize] = []
    /// Whether requests without `sig` are served, and thumbor URLs starting `/unsafe/`. Default `false`. A `sig`
    /// (or a thumbor signature) that is present is always checked.
    public var allowsUnsigned = false
    /// The keys of thumbor-style signed URLs (`/SIGNATURE/…`: HMAC-SHA1, as thumbor's `SECURITY_KEY`, its UTF-8
    /// bytes), each at least 16 bytes; any of them matches, so keys rotate without downtime. Default none:
    /// only `/unsafe/…` thumbor URLs, and those only with `allowsUnsigned`.
    public var thumborKeys: [[UInt8]] = []
    /// Host names sources may come from (exact, case-insensitive; `*.example.com` allows its subdomains), the
    /// source's URL and every redirect it follows; empty (the default) allows any host, subject to the source
    /// policy.
    public var allowedHosts: [String] = []
    /// Networks (CIDR) sources may connect to besides public addresses (`SourcePolicy.publicOnly(allowing:)`).
    /// Default none: loopback, private, link-local and the rest are refused.
    public var allowedNetworks: [IPNetwork] = []
    /// Pipelines (distinct results being made) at the same time; past it a request gets 503 with
    /// `Retry-After`, never a queue. Default 64.
    public var maxConcurrency = 64
    /// The quality of requests without `q`, 1…100. Default `ImageRequestOptions.defaultQuality` (80).
    public var defaultQuality = ImageRequestOptions.defaultQuality
    /// The automatic quality of requests without `q` (`--default-quality auto…`); wins over `defaultQuality`
    /// for still lossy output. Default `nil` (fixed quality).
    public var defaultAutomaticQuality: QualityTarget?
    /// How hard lossy output is worked for fewer bytes (`EncodeEffort`, `--encode-effort`). Default `.balanced`:
    /// Robidoux's JPEG tables (`EncodeOptions.jpegQuantization`), libwebp's method 4, libaom speed 8, libjxl effort
    /// 5; `.smallest` writes progressive JPEG, WebP method 6 with sharp YUV, AVIF at speed 6 and JPEG XL at effort 6
    /// for a few % fewer bytes at 2-7 times the encode time; `.fast` WebP method 2, AVIF speed 9, JPEG XL effort 4.
    public var encodeEffort: EncodeEffort = .balanced
    /// Seconds in `Retry-After` of a 503. Default 1.
    public var retryAfterSeconds = 1
    /// `Cache-Control: public, max-age=` of an image response, in seconds. Default 86,400 (one day, as thumbor).
    public var cacheMaxAge = 86_400
    /// The largest source accepted, in bytes (after content decoding). Default
    /// `FetchRequest.defaultMaximumResponseSize` (64 MiB, or a tenth of physical memory if less).
    public var maximumSourceSize: Int64 = FetchRequest.defaultMaximumResponseSize
    /// The source's deadline, in seconds, counted from the request's arrival: the wait for a transfer slot and the
    /// transfer together (a request that waited the whole time is answered, never started). Default 10.
    public var sourceTimeout: Double = 10
    /// The time a render (decode, shape, encode) may take, in seconds, counted from when its source is there (the
    /// wait for the decode budget included). Past it the request is answered 503 at once and its pipeline slot
    /// freed; the render itself stops at its next check (between frames and steps, inside libwebp's and libjxl's
    /// encoders; one AV1 frame or one decode runs to its end first) and its memory stays reserved in the decode
    /// budget until it has. 0, negative or not finite: no limit. Default 10.
    public var renderTimeout: Double = 10
    /// Whether `format=auto` tries JPEG XL first (before AVIF and WebP) for a client that lists `image/jxl`, as
    /// every request's `prefer=jxl` does. Default `false`.
    public var prefersJXL = false
    /// Limits on the decoded source (pixels per frame and per animation, frames). Default `DecodeLimits.default`.
    public var decodeLimits = DecodeLimits.default
    /// The most pixels an output may have (width × height, per frame). Default 16,777,216 (4096 × 4096). An
    /// animation kept with `anim=1` may also have at most `decodeLimits.maxTotalPixels` in all its frames.
    public var maximumOutputPixels = 4096 * 4096
    /// Bytes of encoded results kept in memory. Default 256 MiB.
    public var resultMemoryCostLimit = 256 << 20
    /// Bytes of encoded results kept on disk. Default 1 GiB.
    public var resultDiskCostLimit: Int64 = 1 << 30
    /// Bytes of source images kept on disk. Default 1 GiB (`ImageCacheLimits.default`).
    public var originalDiskCostLimit: Int64 = 1 << 30
    /// Whether processed results are cached (memory and disk). Default `true`; `false` makes every request
    /// run the pipeline (the benchmark's cold runs).
    public var cachesResults = true
    /// Transfers to origins at the same time. Default 16.
    public var maxConcurrentTransfers = 16
    /// Transfers to one origin host (the URL's host name, any port) at the same time, so that one slow host cannot
    /// take every transfer slot; `nil` (the default) is `max(1, maxConcurrentTransfers / 4)` (4 of the default 16),
    /// or every slot when `allowedHosts` names exactly one host (no wildcard): all transfers go to it then.
    public var maxConcurrentTransfersPerHost: Int?
    /// Requests that may wait for a transfer slot for one host (past it they get 503 at once, without holding a
    /// pipeline slot while they wait); `nil` (the default) is `max(1, maxConcurrency / 4)` (16 of the default 64).
    /// A waiting request is answered when its deadline (`sourceTimeout` after it arrived) passes, or when it gets a
    /// slot with less than a tenth of it left (50 ms to 1 s): 504 when it waited behind its own host's cap, 503
    /// with `Retry-After` when other hosts held every slot; it is never started.
    public var maxQueuedTransfersPerHost: Int?
    /// A tier shared by a fleet of servers for the original bytes (e.g. `MemcachedTier` from the
    /// `WebImageMemcached` product), asked after the originals' disk cache and before the origin. Default `nil`.
    public var sharedTier: (any RemoteCacheTier)?

    /// Makes a configuration caching under `cacheDirectory`, every other setting at its default.
    public init(cacheDirectory: String) {
        self.cacheDirectory = cacheDirectory
    }
}
