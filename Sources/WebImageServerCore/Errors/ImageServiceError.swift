import Fetcher
import Foundation
import ImageCodec
import WebImage

/// Every error the image service answers with, each mapped to one HTTP status (`httpStatus`) and keeping its
/// cause for the log.
///
/// | case | status |
/// |---|---|
/// | `badOptions` | 400 |
/// | `badSignature`, `sourceRefused` | 403 |
/// | `originNotFound` | 404 |
/// | `sourceTooLarge` | 413 |
/// | `notAnImage` | 415 |
/// | `pixelLimit` | 422 |
/// | `originFailed`, `originUnreachable` | 502 |
/// | `saturated` | 503 with `Retry-After` |
/// | `renderTimeout` | 503 |
/// | `originTimeout` | 504 |
/// | `internalFailure` | 500 |
/// | `badSigningKey` | (thrown by `ImageService.init`, never answered) |
///
/// - Important: A value type; thread-safe.
public enum ImageServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A missing, malformed, unknown or out-of-range option (the message names it).
    case badOptions(String)
    /// A missing or wrong `sig` while signatures are required, or a wrong one at any time.
    case badSignature
    /// The source is refused before any name is resolved: not on the host allow-list, not http/https, a redirect
    /// to another scheme, a `file` URL or a host off the allow-list (the message says which). An address the
    /// source policy refuses is `originUnreachable`, not this.
    case sourceRefused(String)
    /// The origin answered 404 or 410.
    case originNotFound(status: Int)
    /// The source is over the response-size limit (bytes).
    case sourceTooLarge(limit: Int64)
    /// The source bytes are not an image this service decodes (unknown, unsupported or corrupt).
    case notAnImage(String)
    /// The source or the requested output is over a pixel, dimension or frame limit.
    case pixelLimit(String)
    /// The origin failed: another HTTP status, a refused or broken connection, a TLS failure.
    case originFailed(String)
    /// No connection to the origin: its name does not resolve, it resolves to an address the source policy
    /// refuses (loopback, private, link-local…), or the connection is refused or unreachable. The client is
    /// told "origin unreachable" and nothing more, the same status and body for every one of these: telling them
    /// apart let anyone ask the service whether an internal name exists and to which class of address it
    /// resolves. `reason` (the cause, with the address) is for the server's log only.
    case originUnreachable(reason: String)
    /// More requests in flight than the service's concurrency limit; retry after the given seconds.
    case saturated(retryAfter: Int)
    /// The origin did not answer within the transfer timeout.
    case originTimeout
    /// The render (decode, shape, encode) ran past `ImageServiceConfiguration.renderTimeout` (seconds) and was
    /// stopped. Answered 503 without `Retry-After`: the same request would take as long again.
    case renderTimeout(seconds: Double)
    /// Anything else (an encoder failure); a bug or an exhausted resource.
    case internalFailure(String)
    /// The configured signing key is refused (under 16 bytes): thrown by `ImageService.init`, never answered.
    case badSigningKey(URLSignerError)

    /// The HTTP status this error is answered with.
    public var httpStatus: Int {
        switch self {
        case .badOptions: return 400
        case .badSignature, .sourceRefused: return 403
        case .originNotFound: return 404
        case .sourceTooLarge: return 413
        case .notAnImage: return 415
        case .pixelLimit: return 422
        case .originFailed, .originUnreachable: return 502
        case .saturated, .renderTimeout: return 503
        case .originTimeout: return 504
        case .internalFailure, .badSigningKey: return 500
        }
    }

    /// A one-line explanation, sent as the (plain text) body of the error response.
    public var description: String {
        switch self {
        case .badOptions(let message): return "bad options: \(message)"
        case .badSignature: return "bad or missing signature"
        case .sourceRefused(let message): return "source refused: \(message)"
        case .originNotFound(let status): return "origin answered \(status)"
        case .sourceTooLarge(let limit): return "source larger than \(limit) bytes"
        case .notAnImage(let message): return "not an image: \(message)"
        case .pixelLimit(let message): return "over a pixel limit: \(message)"
        case .originFailed(let message): return "origin failed: \(message)"
        case .originUnreachable: return "origin unreachable"
        case .saturated(let seconds): return "saturated; retry after \(seconds) s"
        case .originTimeout: return "origin timed out"
        case .renderTimeout(let seconds): return "render took longer than \(seconds) s"
        case .internalFailure(let message): return "internal failure: \(message)"
        case .badSigningKey(let error): return "bad signing key: \(error)"
        }
    }

    /// The service error for a failure of the WebImage pipeline (fetch, decode, cache).
    public init(_ error: WebImageError) {
        switch error {
        case .fetchFailed(let fetch): self.init(fetch)
        case .decodeFailed(let codec): self.init(codec)
        case .inFailedURLList(let url): self = .originFailed("\(url.absoluteString) failed recently")
        case .cacheFailed(let cache): self = .internalFailure("cache: \(cache)")
        case .transformFailed, .notModifiedWithoutCachedData, .cancelled: self = .internalFailure("\(error)")
        }
    }

    /// The service error for a failed transfer.
    public init(_ error: FetchError) {
        switch error {
        case .httpStatus(let status, _) where status == 404 || status == 410: self = .originNotFound(status: status)
        case .httpStatus(let status, _): self = .originFailed("origin answered \(status)")
        case .responseTooLarge(let limit): self = .sourceTooLarge(limit: limit)
        case .timedOut: self = .originTimeout
        // One answer for "no such name", "a refused address" and "refused connection": each told apart made the
        // service an oracle of internal names (403 "its address is loopback" against 502 "Could not resolve host").
        case .addressRefused, .connectionFailed: self = .originUnreachable(reason: "\(error)")
        case .fileURLRefused, .redirectRefused, .hostRefused, .notRegularFile: self = .sourceRefused("\(error)")
        // A redirect to another scheme is a source the service does not load, refused like a file URL (403);
        // one the origin made unfollowable otherwise (no target, not a URL) is its failure (502).
        case .invalidRedirect(_, let target?) where Self.namesAnotherScheme(target):
            self = .sourceRefused("redirected to \(target.prefix(256)), which is not loaded: only http and https are")
        case .invalidRedirect: self = .originFailed("\(error)")
        case .invalidURL(let url): self = .badOptions("url: invalid or unsupported URL \(url)")
        default: self = .originFailed("\(error)")
        }
    }

    /// Whether `target` starts with a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`, then
    /// `:`) other than http and https.
    static func namesAnotherScheme(_ target: String) -> Bool {
        guard let colon = target.firstIndex(of: ":") else { return false }
        let scheme = target[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) })
        else { return false }
        return !["http", "https"].contains(scheme.lowercased())
    }

    /// The service error for a failed decode or encode.
    public init(_ error: ImageCodecError) {
        switch error {
        case .limitExceeded, .invalidDimensions, .allocationFailed: self = .pixelLimit("\(error)")
        case .encodingFailed, .unsupportedEncoding, .frameIndexOutOfRange: self = .internalFailure("\(error)")
        // The render's own deadline; `ImageService` answers it as `.renderTimeout` with the configured seconds.
        case .deadlineExceeded: self = .renderTimeout(seconds: 0)
        default: self = .notAnImage("\(error)")
        }
    }
}
