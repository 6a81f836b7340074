import Foundation
internal import CWebImageCurl

/// Receives a transfer's events, on the network thread, in order: response, then chunks, then completion.
protocol TransferDelegate: AnyObject {
    /// The response head of a successful response, before its first chunk (or before completion when empty).
    func transfer(_ transfer: Transfer, didReceive response: FetchResponse)
    /// A piece of the (decoded) body; the transfer's body buffer already holds it.
    func transfer(_ transfer: Transfer, didReceive chunk: UnsafeRawBufferPointer)
    /// The end: the whole body, or why there is none. Called exactly once; the handle is already detached.
    func transfer(_ transfer: Transfer, didCompleteWith result: Result<FetchResult, FetchError>)
}

/// One libcurl easy transfer for one `FetchRequest`: configures the handle, collects headers and body, enforces
/// the size limit and turns libcurl's result into a `FetchResult` or `FetchError`.
///
/// Confined to the network thread. Not Sendable. Kept alive by `NetworkLoop` while attached; the C callbacks
/// reach it through an unretained pointer.
final class Transfer {
    /// Why the write or header callback stopped the transfer.
    enum Abort {
        case tooLarge, httpStatus
        /// A redirect's head is complete and its body is not worth reading (see `stopsAtRedirectHead`): the
        /// redirect is followed without it.
        case redirectHead
    }

    let request: FetchRequest
    /// The libcurl handle; for a `file` URL it is never configured nor added to the multi handle.
    let easy: CurlEasyHandle
    /// The open file of a `file` URL (read by `NetworkLoop` in chunks, never by libcurl); nil for HTTP(S).
    let file: FileSource?
    weak var delegate: (any TransferDelegate)?
    var headerParser = CurlHeaderParser()
    /// The body received so far (decoded), bounded by the request's `maximumResponseSize`.
    private var bodyBuffer: BodyBuffer
    /// The response head, once delivered.
    private(set) var response: FetchResponse?
    var abort: Abort?
    /// The address the source policy refused (the last one, when several were tried).
    var refusedAddress: (address: IPAddress, category: AddressCategory)?
    /// The heads of the redirects followed so far, first hop first.
    var redirects: [FetchResponse] = []
    /// Body bytes of the current redirect response, read and dropped (bounded like a body).
    var discardedRedirectBytes: Int64 = 0
    /// When the transfer was made (file reads check the request's timeout against it).
    let startTime = ContinuousClock.now
    private var isComplete = false

    private init(request: FetchRequest, easy: CurlEasyHandle, file: FileSource?) {
        self.request = request
        self.easy = easy
        self.file = file
        bodyBuffer = BodyBuffer(limit: request.maximumResponseSize)
    }

    /// A configured transfer for `request`, or the error that prevents one (bad URL, no handle).
    static func make(_ request: FetchRequest, on thread: NetworkThread, share: UnsafeMutableRawPointer?)
        -> Result<Transfer, FetchError> {
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard ["http", "https", "file"].contains(scheme) else {
            return .failure(.invalidURL(request.url.absoluteString))
        }
        var file: FileSource?
        if scheme == "file" {
            guard request.allowsFileURLs else { return .failure(.fileURLRefused(request.url)) }
            // `file://host/path` names a file on another machine: never read a local path for it.
            if let host = request.url.host, !host.isEmpty, host.lowercased() != "localhost" {
                return .failure(.invalidURL(request.url.absoluteString))
            }
            switch FileSource.open(path: request.url.path, limit: request.maximumResponseSize) {
            case .failure(let error): return .failure(error)
            case .success(let source): file = source
            }
        }
        guard let easy = CurlEasyHandle(owner: thread) else {
            return .failure(.transport(curlCode: CurlCode.outOfMemory.rawValue, errno: ENOMEM,
                                       message: "curl_easy_init failed"))
        }
        let transfer = Transfer(request: request, easy: easy, file: file)
        guard file != nil || transfer.requestHostIsAllowed() else { return .failure(.hostRefused(request.url)) }
        guard file != nil || transfer.configure(share: share) else {
            return .failure(.invalidURL(request.url.absoluteString))
        }
        return .success(transfer)
    }

    /// Bytes received so far.
    var receivedCount: Int64 { Int64(bodyBuffer.count) }

    /// A copy of the body received so far (for a caller joining the transfer in flight).
    var bodySoFar: Data { bodyBuffer.copy() }

    /// Called by the write callback with each body piece; returns false to stop the transfer.
    func receive(_ chunk: UnsafeRawBufferPointer) -> Bool {
        if response == nil {
            let status = easy.info(CURLINFO_RESPONSE_CODE)
            if isHTTP && Self.isRedirect(status) {
                // A redirect's body is nobody's: drop it, within the body limit (libcurl reads it too when it
                // follows redirects itself); the redirect is followed when the response completes.
                discardedRedirectBytes += Int64(chunk.count)
                if let limit = request.maximumResponseSize, discardedRedirectBytes > limit {
                    abort = .tooLarge
                    return false
                }
                return true
            }
            if isHTTP && (status >= 400 || status == 304) {
                abort = .httpStatus
                return false
            }
            deliverResponse()
        }
        guard bodyBuffer.append(chunk) else { // over the limit (or out of memory): stop as the bytes arrive
            abort = .tooLarge
            return false
        }
        delegate?.transfer(self, didReceive: chunk)
        return true
    }

    /// Ends the transfer with libcurl's result (the handle must already be detached).
    func complete(with code: Int) {
        finish(outcome(for: code))
    }

    /// Ends the transfer with `error` (the handle must already be detached, or never attached).
    func fail(_ error: FetchError) {
        finish(.failure(error))
    }

    /// Ends the transfer once with `result` (the body buffer is handed over on success).
    func finish(_ result: Result<FetchResult, FetchError>) {
        guard !isComplete else { return }
        isComplete = true
        if case .success = result, response == nil { deliverResponse() }
        let final = result.map { FetchResult(response: response ?? $0.response, body: bodyBuffer.take()) }
        delegate?.transfer(self, didCompleteWith: final)
    }

    var isHTTP: Bool {
        let scheme = request.url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    /// The response head as libcurl sees it now.
    func currentResponse() -> FetchResponse {
        if let file {
            return FetchResponse(url: request.url, statusCode: nil, headers: [], expectedContentLength: file.size)
        }
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        let effective = easy.info(string: CURLINFO_EFFECTIVE_URL).flatMap(URL.init(string:)) ?? request.url
        let length = easy.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        let encoded = headerParser.value("Content-Encoding").map { $0.lowercased() != "identity" } ?? false
        return FetchResponse(url: effective, statusCode: isHTTP ? status : nil, headers: headerParser.headers,
                             expectedContentLength: length >= 0 && !encoded ? length : nil,
                             httpVersion: isHTTP ? Self.httpVersionName(easy.info(CURLINFO_HTTP_VERSION)) : nil,
                             redirects: redirects)
    }

    /// The name of a `CURLINFO_HTTP_VERSION` value; nil for 0 (none yet) and unknown values.
    static func httpVersionName(_ version: Int) -> String? {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "HTTP/1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "HTTP/1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "HTTP/2"
        case 30: return "HTTP/3"  // CURL_HTTP_VERSION_3 (libcurl ≥ 7.66)
        default: return nil
        }
    }

    func deliverResponse() {
        let head = currentResponse()
        response = head
        if let expected = head.expectedContentLength, expected > 0 {
            // A declared length may lie: reserve at most 64 MiB up front; the buffer grows (within the limit)
            // if more really arrives.
            _ = bodyBuffer.reserve(Int(clamping: min(expected, 64 << 20)))
        }
        delegate?.transfer(self, didReceive: head)
    }
}

@available(*, unavailable)
extension Transfer: Sendable {}
