import Dispatch
import Foundation
import Synchronization
import WebImage

/// What happened to one URL of a batch.
struct LoadOutcome: Sendable {
    var url: URL
    var image: Image?
    var source: ImageSource
    var error: WebImageError?
    /// From the request to its completion, in seconds.
    var seconds: Double
    /// The encoded size (the original bytes the image was decoded from), 0 when unknown.
    var bytes: Int64

    var isSuccess: Bool { image != nil && error == nil }

    /// A short explanation of a failure: the HTTP status, the decoder's message, …
    var failureReason: String {
        if let error { return Self.explain(error) }
        return image == nil ? "no image (cancelled)" : "ok"
    }

    static func explain(_ error: WebImageError) -> String {
        switch error {
        case .fetchFailed(.httpStatus(let status, _)):
            return "HTTP \(status) \(HTTPStatusText.reason(status))"
        default:
            return error.description
        }
    }
}

/// Loads many URLs through an `ImageManager` with at most `concurrency` requests in flight, and reports
/// each outcome in the order of the URLs.
///
/// - Important: `load` blocks the calling thread until every request completed; call it from the
///   command's thread, not from a completion.
struct BatchLoader {
    var manager: ImageManager
    var options: ImageOptions = []
    var thumbnailPixelSize: Int?
    /// Requests in flight at most. Default 16.
    var concurrency = 16

    /// Loads `urls`; `onEach` runs as each completes (one call at a time, off the calling thread), and every
    /// outcome is returned, in the order of the URLs (`stream` keeps none, for batches of any length).
    func load(_ urls: [URL], onEach: @escaping @Sendable (LoadOutcome) -> Void = { _ in }) -> [LoadOutcome] {
        let slots = Mutex<[LoadOutcome?]>(Array(repeating: nil, count: urls.count))
        stream(urls) { index, outcome in
            slots.withLock { $0[index] = outcome }
            onEach(outcome)
        }
        return slots.withLock { $0 }.enumerated().map { index, outcome in
            outcome ?? LoadOutcome(url: urls[index], image: nil, source: .none, error: nil, seconds: 0, bytes: 0)
        }
    }
}

/// Reason phrases for the HTTP statuses a failure report shows.
enum HTTPStatusText {
    static func reason(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 410: return "Gone"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
