import Fetcher
import Foundation
import ImageCodec
import KVCache

/// Every error the WebImage pipeline reports. Each case keeps the underlying cause from the layer below.
///
/// - Important: A value type; thread-safe.
public enum WebImageError: Error, Sendable, CustomStringConvertible {
    /// The transfer failed (HTTP status ≥ 400, timeout, connection, TLS, oversize, …).
    case fetchFailed(FetchError)
    /// The bytes could not be decoded (corrupt, truncated, unsupported, over the decode limits).
    case decodeFailed(ImageCodecError)
    /// The disk cache failed (SQLite or file error); the request may still have succeeded from the network.
    case cacheFailed(KVCacheError)
    /// The URL failed before with a non-transient error and `.ignoreFailedURL` is set: no request was made.
    case inFailedURLList(URL)
    /// The transform returned `nil`.
    case transformFailed(URL)
    /// The cached entry for a 304 Not Modified answer has gone (removed meanwhile).
    case notModifiedWithoutCachedData(URL)
    /// The request was cancelled (`ImageOperation.cancel()`, a setter's newer request, the task): reported by
    /// the `Result`-based APIs, where the five-argument completion says `.cancelled`.
    case cancelled(URL)

    public var description: String {
        switch self {
        case .fetchFailed(let error): return "fetch failed: \(error)"
        case .decodeFailed(let error): return "decode failed: \(error)"
        case .cacheFailed(let error): return "disk cache failed: \(error)"
        case .inFailedURLList(let url): return "\(url) failed before and is in the failed-URL list"
        case .transformFailed(let url): return "the transform returned no image for \(url)"
        case .notModifiedWithoutCachedData(let url): return "304 Not Modified for \(url) but its cached bytes are gone"
        case .cancelled(let url): return "the request for \(url) was cancelled"
        }
    }
}
