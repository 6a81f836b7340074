import Foundation

/// Why a fetch did not produce a body. Keeps the underlying cause: the libcurl code (`CURLcode`), the HTTP
/// status, the OS `errno`, libcurl's message.
///
/// A value type; Sendable.
public enum FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The operation was cancelled by its caller (or by `FetchQueue.cancelAll()`).
    case cancelled
    /// The network thread had stopped before the operation could finish.
    case networkThreadStopped
    /// The URL is malformed or its scheme is not http, https or file (for a redirect to such a URL: its target).
    case invalidURL(String)
    /// The server answered with a status ≥ 400. The response carries the headers.
    case httpStatus(Int, FetchResponse)
    /// The server answered `304 Not Modified` to a conditional request (`If-None-Match` / `If-Modified-Since`):
    /// the caller's cached copy is still valid.
    case notModified(FetchResponse)
    /// The request did not finish within its `timeout`.
    case timedOut(curlCode: Int)
    /// No connection could be made (refused, unreachable, name not resolved).
    case connectionFailed(curlCode: Int, errno: Int32, message: String)
    /// The connection broke while sending or receiving (reset, nothing received).
    case connectionLost(curlCode: Int, errno: Int32, message: String)
    /// The body ended before its declared `Content-Length` (or its last chunk): never a silently short image.
    case incompleteBody(received: Int64, expected: Int64?)
    /// More redirects than the request's `maximumRedirects`, or a redirect loop.
    case tooManyRedirects(limit: Int)
    /// The body is larger than the request's `maximumResponseSize`; the transfer was stopped.
    case responseTooLarge(limit: Int64)
    /// The TLS handshake failed or the certificate was rejected.
    case tlsFailure(curlCode: Int, message: String)
    /// A `file://` URL that cannot be read.
    case fileUnreadable(path: String, errno: Int32)
    /// The body's `Content-Encoding` could not be decoded.
    case badContentEncoding(message: String)
    /// The URL is in the failed-URL list (the request opted in with `usesFailedURLList`).
    case inFailedURLList(URL)
    /// The request's `sourcePolicy` refused the address the transfer was about to connect to (or a reused
    /// connection's peer): nothing was sent to it. `address` is the address as dialled (`::ffff:127.0.0.1`),
    /// `category` why it is not public (for an address wrapping IPv4, the category of the IPv4 address inside).
    case addressRefused(address: String, category: AddressCategory)
    /// A `file` URL that is not read: the request refuses file URLs (`allowsFileURLs` false), or a server
    /// redirected to it (a redirect to `file:` is never followed).
    case fileURLRefused(URL)
    /// A redirect to a host the request's `sourcePolicy.allowedHosts` does not name, or to a scheme other than
    /// http and https (`file:` is `fileURLRefused`): not followed.
    case redirectRefused(URL)
    /// A request whose own host `sourcePolicy.allowedHosts` does not name (read as libcurl reads the URL):
    /// nothing was sent.
    case hostRefused(URL)
    /// The origin answered a redirect (3xx) that cannot be followed: no `Location` libcurl would follow
    /// (missing or empty), a target with no host libcurl can read, or one libcurl then could not use (an
    /// internationalised host it cannot convert in the process's locale). `target` is libcurl's reading of it,
    /// when it had one. The origin's fault, not the caller's.
    case invalidRedirect(status: Int, target: String?)
    /// A `file` URL naming something other than a regular file or a directory (directories are
    /// `fileUnreadable` with `EISDIR`): a device such as `/dev/zero`, a FIFO or a socket. Nothing was read.
    case notRegularFile(path: String, kind: FileKind)
    /// Any other libcurl failure.
    case transport(curlCode: Int, errno: Int32, message: String)

    /// The libcurl result code behind this error, when there is one.
    public var curlCode: Int? {
        switch self {
        case .timedOut(let code), .connectionFailed(let code, _, _), .connectionLost(let code, _, _),
             .tlsFailure(let code, _), .transport(let code, _, _):
            return code
        default:
            return nil
        }
    }

    /// The HTTP status behind this error, when there is one.
    public var httpStatusCode: Int? {
        switch self {
        case .httpStatus(let status, _): return status
        case .notModified: return 304
        default: return nil
        }
    }

    /// True when retrying later may succeed: timeouts, connection failures, cancellations, server errors
    /// (5xx, 408, 429). False for failures that will repeat (404, 410, redirect loops, oversize, bad URL).
    /// The failed-URL list records only failures that are not transient.
    public var isTransient: Bool {
        switch self {
        case .cancelled, .networkThreadStopped, .timedOut, .connectionFailed, .connectionLost, .incompleteBody,
             .tlsFailure, .notModified, .inFailedURLList, .transport:
            return true
        case .httpStatus(let status, _):
            return status >= 500 || status == 408 || status == 425 || status == 429
        case .invalidURL, .tooManyRedirects, .responseTooLarge, .fileUnreadable, .badContentEncoding,
             .addressRefused, .fileURLRefused, .redirectRefused, .hostRefused, .invalidRedirect, .notRegularFile:
            return false
        }
    }

    /// A readable description, for logs and test failures.
    public var description: String {
        switch self {
        case .cancelled: return "cancelled"
        case .networkThreadStopped: return "the network thread has stopped"
        case .invalidURL(let url): return "invalid or unsupported URL: \(url)"
        case .httpStatus(let status, let response): return "HTTP \(status) from \(response.url.absoluteString)"
        case .notModified: return "304 not modified"
        case .timedOut: return "timed out"
        case .connectionFailed(let code, let errno, let message): return "connection failed (curl \(code), errno \(errno)): \(message)"
        case .connectionLost(let code, let errno, let message): return "connection lost (curl \(code), errno \(errno)): \(message)"
        case .incompleteBody(let received, let expected):
            return "incomplete body: \(received) of \(expected.map(String.init) ?? "unknown") bytes"
        case .tooManyRedirects(let limit): return "more than \(limit) redirects"
        case .responseTooLarge(let limit): return "response larger than \(limit) bytes"
        case .tlsFailure(let code, let message): return "TLS failure (curl \(code)): \(message)"
        case .fileUnreadable(let path, let errno): return "cannot read \(path) (errno \(errno))"
        case .badContentEncoding(let message): return "bad content encoding: \(message)"
        case .inFailedURLList(let url): return "\(url.absoluteString) is in the failed-URL list"
        case .addressRefused(let address, let category):
            return "refused by the source policy: \(address) is \(category), not public"
        case .fileURLRefused(let url): return "file URL refused: \(url.absoluteString)"
        case .redirectRefused(let url): return "redirect refused: \(url.absoluteString) is not an allowed http(s) host"
        case .hostRefused(let url): return "refused: the host of \(url.absoluteString) is not allowed"
        case .invalidRedirect(let status, let target):
            return "the origin's \(status) redirect cannot be followed: " + (target.map { "target \($0)" } ?? "no Location")
        case .notRegularFile(let path, let kind): return "not a regular file: \(path) is a \(kind)"
        case .transport(let code, let errno, let message): return "curl error \(code) (errno \(errno)): \(message)"
        }
    }
}

/// What a `file` URL names when it is not a regular file (`fstat`'s file type).
public enum FileKind: String, Sendable, Hashable, CustomStringConvertible {
    /// `S_IFDIR`.
    case directory
    /// `S_IFCHR`, e.g. `/dev/zero`.
    case characterDevice = "character device"
    /// `S_IFBLK`.
    case blockDevice = "block device"
    /// `S_IFIFO` (a named pipe).
    case fifo = "FIFO"
    /// `S_IFSOCK`.
    case socket
    /// Any other type.
    case other

    /// The kind's name (`"character device"`, `"FIFO"`, …).
    public var description: String { rawValue }
}
