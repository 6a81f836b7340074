import Foundation

/// What `HTTPTestServer` sends for one route: a well-formed response by default, or a misbehaving one.
///
/// Build one with a factory (`.bytes(_:)`, `.status(_:)`, `.redirect(to:)`, `.drip(_:chunk:interval:)`, …)
/// and refine it with modifiers (`.delayed(by:)`, `.withETag(_:)`, `.requiringBasicAuth(user:password:)`, …):
///
///     server.route("/a.jpg", .bytes(jpeg, contentType: "image/jpeg").withETag("\"v1\""))
///     server.route("/slow", .drip(data, chunk: 100, interval: 0.05))
///
/// A value type; Sendable.
public struct HTTPTestResponse: Sendable {
    /// How the body goes on the wire.
    public enum Delivery: Sendable, Equatable {
        /// All at once, with a `Content-Length`.
        case whole
        /// `Transfer-Encoding: chunked`, in chunks of this many bytes.
        case chunked(size: Int)
        /// With a `Content-Length`, `chunk` bytes every `interval` seconds.
        case drip(chunk: Int, interval: Double)
    }

    /// The `Content-Encoding` applied to `body` before sending (real zlib output).
    public enum Encoding: Sendable, Equatable {
        case identity, gzip, deflate
    }

    /// How the exchange is cut short, after `afterBodyBytes` bytes of the (encoded) body.
    public enum Fault: Sendable, Equatable {
        /// Close the connection cleanly (FIN) mid-body.
        case close(afterBodyBytes: Int)
        /// Reset the connection (RST, `SO_LINGER` 0) mid-body.
        case reset(afterBodyBytes: Int)
    }

    /// The status code. 200 by default.
    public var status: Int = 200
    /// Extra response headers, in order.
    public var headers: [(name: String, value: String)] = []
    /// The body before any content encoding. Empty by default.
    public var body: [UInt8] = []
    /// Seconds to wait before sending anything. 0 by default.
    public var delay: Double = 0
    /// How the body is framed and paced. `.whole` by default.
    public var delivery: Delivery = .whole
    /// The content encoding. `.identity` by default.
    public var encoding: Encoding = .identity
    /// A `Content-Length` to declare instead of the true one (the connection is closed after the body so the
    /// client notices). nil (the true length) by default.
    public var declaredContentLength: Int?
    /// A connection fault mid-body. None by default.
    public var fault: Fault?
    /// Sent as `ETag`; a request whose `If-None-Match` equals it gets `304 Not Modified`. None by default.
    public var etag: String?
    /// Sent as `Last-Modified`; a request whose `If-Modified-Since` equals it gets 304. None by default.
    public var lastModified: String?
    /// When set, requests without `Authorization: Basic base64(user:password)` get `401`. None by default.
    public var basicAuth: (user: String, password: String)?
    /// `Set-Cookie` header values to send. None by default.
    public var setCookies: [String] = []
    /// When true, the body is replaced by the request's `Cookie` header (empty when absent). False by default.
    public var echoesCookies = false
    /// A body produced piece by piece while the client reads (endless or huge bodies, never held in memory);
    /// replaces `body`, ignores `encoding` (the pieces are sent as produced), sent chunked unless
    /// `declaredContentLength` is set. None by default.
    public var stream: BodyStream?

    /// Makes the pieces of a streamed body: each call of `makePieces()` starts a fresh sequence (one per
    /// request); its closure returns the next piece, or nil at the end. The closure runs on the server's event
    /// loop, one piece after the previous one was written to the socket (so the server holds one piece at a time).
    public struct BodyStream: Sendable {
        /// Starts a sequence of pieces.
        public let makePieces: @Sendable () -> () -> [UInt8]?
        /// A stream.
        public init(_ makePieces: @escaping @Sendable () -> () -> [UInt8]?) {
            self.makePieces = makePieces
        }
    }

    /// A response with `status` and `body`.
    public init(status: Int = 200, body: [UInt8] = [], headers: [(name: String, value: String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }
}

// MARK: - Factories

extension HTTPTestResponse {
    /// 200 with `data` as the body and a `Content-Type`.
    public static func bytes(_ data: some Sequence<UInt8>, contentType: String = "application/octet-stream") -> Self {
        Self(body: Array(data), headers: [("Content-Type", contentType)])
    }

    /// Any status, with an optional short text body.
    public static func status(_ code: Int, body: String = "") -> Self {
        Self(status: code, body: Array(body.utf8), headers: [("Content-Type", "text/plain")])
    }

    /// A redirect (302 by default) to `location` (a path on this server or an absolute URL).
    public static func redirect(to location: String, status: Int = 302) -> Self {
        Self(status: status, headers: [("Location", location)])
    }

    /// 200 whose body arrives `chunk` bytes every `interval` seconds (with a correct `Content-Length`).
    public static func drip(_ data: some Sequence<UInt8>, chunk: Int, interval: Double) -> Self {
        var response = bytes(data)
        response.delivery = .drip(chunk: max(1, chunk), interval: interval)
        return response
    }

    /// 200 sent with `Transfer-Encoding: chunked`.
    public static func chunked(_ data: some Sequence<UInt8>, chunkSize: Int = 4_096) -> Self {
        var response = bytes(data)
        response.delivery = .chunked(size: max(1, chunkSize))
        return response
    }

    /// 200 with the body gzip-encoded (`Content-Encoding: gzip`).
    public static func gzip(_ data: some Sequence<UInt8>) -> Self {
        var response = bytes(data)
        response.encoding = .gzip
        return response
    }

    /// 200 with the body zlib-encoded (`Content-Encoding: deflate`).
    public static func deflate(_ data: some Sequence<UInt8>) -> Self {
        var response = bytes(data)
        response.encoding = .deflate
        return response
    }

    /// 200 declaring the full `Content-Length`, then closing the connection after `after` body bytes.
    public static func closeMidBody(_ data: some Sequence<UInt8>, after: Int) -> Self {
        var response = bytes(data)
        response.fault = .close(afterBodyBytes: after)
        return response
    }

    /// 200 declaring `declared` as `Content-Length` while sending all of `data`, then closing.
    public static func wrongContentLength(_ data: some Sequence<UInt8>, declared: Int) -> Self {
        var response = bytes(data)
        response.declaredContentLength = declared
        return response
    }

    /// 200 declaring the full length, then resetting the connection (RST) after `after` body bytes.
    public static func reset(_ data: some Sequence<UInt8>, after: Int) -> Self {
        var response = bytes(data)
        response.fault = .reset(afterBodyBytes: after)
        return response
    }

    /// 200 whose chunked body of pseudo-random bytes never ends (a 1 MiB seeded block, repeated).
    public static func endlessRandom(seed: UInt64 = 1) -> Self {
        var generator = SplitMix64(seed: seed)
        let block = (0..<(1 << 17)).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
        var response = Self(headers: [("Content-Type", "application/octet-stream")])
        response.stream = BodyStream { { block } }
        return response
    }

    /// 200 with `Content-Encoding: gzip` (or `deflate`) whose body inflates to `decodedBytes` zero bytes,
    /// compressed on the fly as the client reads (4 GiB of zeros is about 4 MB on the wire), sent chunked.
    public static func zeroBomb(decodedBytes: Int64, encoding: Encoding = .gzip) -> Self {
        var response = Self(headers: [("Content-Type", "image/png"),
                                      ("Content-Encoding", encoding == .deflate ? "deflate" : "gzip")])
        response.stream = BodyStream {
            let deflater = ZlibStreamDeflater(gzip: encoding != .deflate)
            var remaining = decodedBytes
            return {
                while true {
                    let input = Int(min(remaining, 4 << 20))
                    remaining -= Int64(input)
                    guard let output = deflater.compressZeros(input, finish: remaining == 0) else { return nil }
                    if !output.isEmpty || remaining == 0 { return output.isEmpty ? nil : output }
                }
            }
        }
        return response
    }

    /// 200 declaring `Content-Length: declared` (e.g. 10 GB) and sending random bytes without end.
    public static func hugeDeclaredLength(_ declared: Int) -> Self {
        var response = endlessRandom()
        response.declaredContentLength = declared
        return response
    }

    /// 200 that sets `cookies` and echoes the request's `Cookie` header as its body.
    public static func cookieEcho(setting cookies: [String] = []) -> Self {
        var response = Self(headers: [("Content-Type", "text/plain")])
        response.setCookies = cookies
        response.echoesCookies = true
        return response
    }
}

// MARK: - Modifiers

extension HTTPTestResponse {
    /// This response, sent after waiting `seconds`.
    public func delayed(by seconds: Double) -> Self { with { $0.delay = seconds } }
    /// This response with an `ETag` (and 304 for a matching `If-None-Match`).
    public func withETag(_ etag: String) -> Self { with { $0.etag = etag } }
    /// This response with a `Last-Modified` (and 304 for a matching `If-Modified-Since`).
    public func withLastModified(_ date: String) -> Self { with { $0.lastModified = date } }
    /// This response, or 401 for a request without these Basic credentials.
    public func requiringBasicAuth(user: String, password: String) -> Self { with { $0.basicAuth = (user, password) } }
    /// This response with one more header.
    public func withHeader(_ name: String, _ value: String) -> Self { with { $0.headers.append((name, value)) } }
    /// This response with `Set-Cookie` headers.
    public func settingCookies(_ cookies: [String]) -> Self { with { $0.setCookies += cookies } }

    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}
