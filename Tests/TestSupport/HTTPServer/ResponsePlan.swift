import Foundation
import NIOHTTP1

/// The exact bytes `HTTPTestConnectionHandler` writes for one request: the head, the body as framed on the wire
/// (possibly cut short), how to pace it and how the connection ends. Built from the route's `HTTPTestResponse`
/// after applying Basic auth, conditional requests (304), cookie echo and content encoding.
struct ResponsePlan {
    enum Pacing { case whole, drip(chunk: Int, interval: Double) }
    enum Ending { case keepAlive, close, reset }

    let head: [UInt8]
    let body: [UInt8]
    let pacing: Pacing
    let ending: Ending
    /// A body produced while sending (after `head`), chunk-framed when `isStreamChunked`.
    let stream: HTTPTestResponse.BodyStream?
    let isStreamChunked: Bool

    init(request: HTTPTestServer.Request, response original: HTTPTestResponse) {
        var response = original
        var headers = response.headers
        if let (user, password) = response.basicAuth,
           request.header("Authorization") != "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() {
            response = .status(401, body: "unauthorized")
            headers = response.headers + [("WWW-Authenticate", "Basic realm=\"test\"")]
        } else if Self.isNotModified(request, response) {
            response = HTTPTestResponse(status: 304)
            headers = []
        }
        if let etag = original.etag { headers.append(("ETag", etag)) }
        if let date = original.lastModified { headers.append(("Last-Modified", date)) }
        headers += original.setCookies.map { ("Set-Cookie", $0) }

        var payload = response.stream != nil ? [] : response.echoesCookies ? Array((request.header("Cookie") ?? "").utf8) : response.body
        do {
            switch response.encoding {
            case .identity: break
            case _ where response.stream != nil: break // a stream's pieces are sent as produced
            case .gzip: payload = try ZlibEncoding.gzip(payload); headers.append(("Content-Encoding", "gzip"))
            case .deflate: payload = try ZlibEncoding.zlib(payload); headers.append(("Content-Encoding", "deflate"))
            }
        } catch {
            response = .status(500, body: "test server: \(error)")
            payload = response.body
        }

        let hasBody = !(response.status < 200 || response.status == 204 || response.status == 304)
        var ending: Ending = request.header("Connection")?.lowercased() == "close" ? .close : .keepAlive
        var wire = hasBody && request.method != "HEAD" ? payload : []
        stream = request.method == "HEAD" ? nil : response.stream
        isStreamChunked = stream != nil && response.declaredContentLength == nil
        if let declared = response.declaredContentLength, stream != nil {
            headers.append(("Content-Length", String(declared)))
            ending = .close
        } else if stream != nil {
            headers.append(("Transfer-Encoding", "chunked"))
        } else if hasBody {
            if case .chunked(let size) = response.delivery {
                headers.append(("Transfer-Encoding", "chunked"))
                if !wire.isEmpty { wire = Self.chunkFramed(wire, size: size) }
                if request.method != "HEAD" { wire += Array("0\r\n\r\n".utf8) }
            } else {
                headers.append(("Content-Length", String(response.declaredContentLength ?? payload.count)))
                if response.declaredContentLength != nil { ending = .close }
            }
        }
        switch response.fault {
        case .close(let count)?: wire = Array(wire.prefix(count)); ending = .close
        case .reset(let count)?: wire = Array(wire.prefix(count)); ending = .reset
        case nil: break
        }
        if ending != .keepAlive { headers.append(("Connection", "close")) }

        let reason = HTTPResponseStatus(statusCode: response.status).reasonPhrase
        var text = "HTTP/1.1 \(response.status) \(reason)\r\nServer: HTTPTestServer\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        head = Array(text.utf8)
        body = wire
        if case .drip(let chunk, let interval) = response.delivery { pacing = .drip(chunk: chunk, interval: interval) }
        else { pacing = .whole }
        self.ending = ending
    }

    private static func isNotModified(_ request: HTTPTestServer.Request, _ response: HTTPTestResponse) -> Bool {
        if let etag = response.etag, let sent = request.header("If-None-Match") {
            return sent.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
        }
        if let date = response.lastModified, let sent = request.header("If-Modified-Since") { return sent == date }
        return false
    }

    private static func chunkFramed(_ bytes: [UInt8], size: Int) -> [UInt8] {
        var framed: [UInt8] = []
        framed.reserveCapacity(bytes.count + bytes.count / size * 12 + 16)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            framed += Array("\(String(end - offset, radix: 16))\r\n".utf8)
            framed += bytes[offset..<end]
            framed += [13, 10]
            offset = end
        }
        return framed
    }
}
