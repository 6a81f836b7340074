import Foundation
internal import CWebImageCurl
internal import CWebImageCurlShims

/// The write callback (`CURLOPT_WRITEFUNCTION`): hands each body piece to its `Transfer`.
/// Returning a count other than `size * count` makes libcurl stop with `CURLE_WRITE_ERROR`.
private let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, userdata in
    guard let userdata else { return 0 }
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard !overflow else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.receive(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
}

/// The header callback (`CURLOPT_HEADERFUNCTION`): one header line per call.
private let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, userdata in
    guard let userdata else { return 0 }
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard !overflow else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    transfer.headerParser.consume(UnsafeRawBufferPointer(start: data, count: total))
    return total
}

extension Transfer {
    /// Sets every option of the easy handle from the request; false when libcurl rejects the URL.
    func configure(share: UnsafeMutableRawPointer?) -> Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard easy.set(CURLOPT_URL, request.url.absoluteString) else { return false }
        easy.set(CURLOPT_PRIVATE, pointer: me)
        easy.set(CURLOPT_NOSIGNAL, 1)
        // Only these schemes, and redirects never to file:// (a server must not make us read local files).
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https,file")
        easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_FOLLOWLOCATION, 1)
        easy.set(CURLOPT_MAXREDIRS, max(0, request.maximumRedirects))
        easy.set(CURLOPT_ACCEPT_ENCODING, "") // every encoding this libcurl decodes (gzip, deflate, …)
        easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        // Over TLS, wait for a connection being set up to the same host rather than opening another: if ALPN
        // gives HTTP/2, every image to that host multiplexes over one connection (one TLS handshake, not six).
        // Plain http:// is HTTP/1.1 here, so it keeps its parallel connections from the start.
        if request.url.scheme?.lowercased() == "https" { easy.set(CURLOPT_PIPEWAIT, 1) }
        easy.set(CURLOPT_FAILONERROR, 1)
        // A 256 KB receive buffer (libcurl's default is 16 KB; the curl tool uses 100 KB): fewer reads and write
        // callbacks for large images (the fetcher benchmark's 1 MB workload).
        easy.set(CURLOPT_BUFFERSIZE, 256 * 1_024)
        let timeout = max(1, Int((request.timeout * 1_000).rounded()))
        easy.set(CURLOPT_TIMEOUT_MS, timeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, timeout)
        easy.setHeaders(request.headerLines)
        if let credentials = request.credentials {
            easy.set(CURLOPT_HTTPAUTH, Int(wi_curlauth_basic()))
            easy.set(CURLOPT_USERNAME, credentials.user)
            easy.set(CURLOPT_PASSWORD, credentials.password)
        }
        if request.handlesCookies {
            if let share { easy.set(CURLOPT_SHARE, pointer: share) }
            easy.set(CURLOPT_COOKIEFILE, "") // turn the cookie engine on, reading no file
        }
        if request.allowsInvalidCertificates {
            easy.set(CURLOPT_SSL_VERIFYPEER, 0)
            easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let limit = request.maximumResponseSize {
            easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: limit) // refuses a declared length over the limit early
        }
        _ = wi_easy_setopt_write_callback(easy.raw, CURLOPT_WRITEFUNCTION, writeCallback)
        easy.set(CURLOPT_WRITEDATA, pointer: me)
        _ = wi_easy_setopt_write_callback(easy.raw, CURLOPT_HEADERFUNCTION, headerCallback)
        easy.set(CURLOPT_HEADERDATA, pointer: me)
        return true
    }
}
