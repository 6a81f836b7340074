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
    // The blank line ends a response head: refuse a declared length over the limit before any body byte…
    if total <= 2, transfer.declaresTooLargeBody() {
        transfer.abort = .tooLarge
        return 0
    }
    // …and stop at a redirect's head when its body could drip or run on (it is dropped anyway).
    if total <= 2, transfer.stopsAtRedirectHead() {
        transfer.abort = .redirectHead
        return 0
    }
    return total
}

/// The source-policy check (`wi_set_address_check`), called by the C shim's `CURLOPT_OPENSOCKETFUNCTION` with
/// each resolved address before connecting, and by its `CURLOPT_PREREQFUNCTION` with the connection's peer
/// before each request. Returns 1 to allow, 0 to refuse (the refusal is recorded on the transfer).
private let addressCheck: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<UInt8>?) -> Int32 = {
    context, family, bytes in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0
    guard let bytes, length > 0,
          let address = IPAddress(bytes: UnsafeBufferPointer(start: bytes, count: length)) else { return 0 }
    if let category = transfer.request.sourcePolicy.refusal(for: address) {
        transfer.refusedAddress = (address, category)
        return 0
    }
    return 1
}

/// Registers `addressCheck` with the C shim, once per process (a `static let` runs once, thread-safely).
private enum AddressCheckRegistration {
    static let done: Void = wi_set_address_check(addressCheck)
}

extension Transfer {
    /// Whether the response head just completed is a success declaring a `Content-Length` over the limit.
    ///
    /// The limit counts decoded bytes; a `Content-Length` counts encoded ones. An encoded body (gzip, deflate,
    /// br) of incompressible bytes is slightly larger than what it decodes to, so it is refused here only past
    /// `encodedLimit(for:)` — the decoded bytes are still held to the exact limit as they arrive.
    func declaresTooLargeBody() -> Bool {
        guard let limit = request.maximumResponseSize,
              let declared = headerParser.value("Content-Length").flatMap(Self.parseContentLength) else { return false }
        let encoding = headerParser.value("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let isEncoded = !encoding.isEmpty && encoding != "identity"
        guard declared > (isEncoded ? Self.encodedLimit(for: limit) : limit) else { return false }
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        return (200..<300).contains(status)
    }

    /// A `Content-Length` value (`1*DIGIT`, RFC 9110 §8.6); one too large for 64 bits reads as `Int64.max` (so
    /// it is over any limit), anything else (a sign, spaces inside, a list) as nil: libcurl then decides.
    static func parseContentLength(_ text: String) -> Int64? {
        var value: Int64 = 0, sawDigit = false
        for byte in text.utf8.trimmingHTTPWhitespace() {
            guard (0x30...0x39).contains(byte) else { return nil }
            sawDigit = true
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - 0x30))
            value = overflow1 || overflow2 ? .max : sum
        }
        return sawDigit ? value : nil
    }

    /// The largest encoded body that can decode to at most `limit` bytes: zlib's worst-case expansion of
    /// incompressible data (`compressBound`: n + n/4096 + n/16384 + 13) plus the gzip wrapper, rounded up to
    /// `limit + limit/1024 + 1 KiB`.
    static func encodedLimit(for limit: Int64) -> Int64 {
        let (sum, overflow) = limit.addingReportingOverflow(limit / 1_024 + 1_024)
        return overflow ? .max : sum
    }

    /// Sends the request's headers, and its credentials when `toOrigin` (the request's own origin): on a
    /// redirect to another origin, neither the credentials nor `Authorization` and `Cookie` headers go along,
    /// and on one to another host a custom `Host` does not either (it names the request's own host) — what
    /// libcurl does when it follows redirects itself.
    func setCredentials(toOrigin: Bool, toSameHost: Bool = true) {
        var droppedFields: [String] = toOrigin ? [] : ["authorization", "cookie"]
        if !toSameHost { droppedFields.append("host") }
        easy.setHeaders(droppedFields.isEmpty ? request.headerLines : request.headerLines.filter { line in
            let name = line.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces).lowercased()
            return !droppedFields.contains(name)
        })
        if let credentials = request.credentials, toOrigin {
            easy.set(CURLOPT_HTTPAUTH, Int(wi_curlauth_basic()))
            easy.set(CURLOPT_USERNAME, credentials.user)
            easy.set(CURLOPT_PASSWORD, credentials.password)
        } else if request.credentials != nil {
            easy.set(CURLOPT_USERNAME, pointer: nil)
            easy.set(CURLOPT_PASSWORD, pointer: nil)
        }
    }

    /// Applies `TLSOptions`: CA bundle or folder, pinned keys, client certificate.
    private func configureTLS(_ tls: TLSOptions) {
        if let path = tls.caBundlePath { easy.set(CURLOPT_CAINFO, path) }
        if let path = tls.caDirectoryPath { easy.set(CURLOPT_CAPATH, path) }
        if let pins = tls.pinnedPublicKeyOption { easy.set(CURLOPT_PINNEDPUBLICKEY, pins) }
        if let path = tls.clientCertificatePath { easy.set(CURLOPT_SSLCERT, path) }
        if let path = tls.clientKeyPath { easy.set(CURLOPT_SSLKEY, path) }
        if let passphrase = tls.clientKeyPassphrase { easy.set(CURLOPT_KEYPASSWD, passphrase) }
    }

    /// Sets every option of the easy handle from the request; false when libcurl rejects the URL.
    func configure(share: UnsafeMutableRawPointer?) -> Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard easy.set(CURLOPT_URL, request.url.absoluteString) else { return false }
        easy.set(CURLOPT_PRIVATE, pointer: me)
        easy.set(CURLOPT_NOSIGNAL, 1)
        // Only HTTP(S) through libcurl: `file` URLs are read by `FileSource`, and a redirect to file:// (or any
        // other scheme) is refused: a server must not make us read local files.
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        // Redirects are followed by `followRedirect` (Transfer+Redirect.swift), to the URL libcurl itself computes
        // (`CURLINFO_REDIRECT_URL`): one reading of `Location`, checked before a byte goes to the target.
        easy.set(CURLOPT_FOLLOWLOCATION, 0)
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
        // CURLOPT_TIMEOUT bounds everything, from resolving to the last byte: a stall before the status line and
        // a 1 byte/s drip end there too.
        easy.set(CURLOPT_TIMEOUT_MS, timeout)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, min(timeout, max(1, Int((request.connectTimeout * 1_000).rounded()))))
        if !request.resolveOverrides.isEmpty { easy.setResolve(request.resolveOverrides) }
        if request.sourcePolicy.isPublicOnly {
            AddressCheckRegistration.done
            guard wi_easy_enable_address_check(easy.raw, me) == CURLE_OK else { return false }
            // Environment proxies are not used under the policy: the address checked must be the origin's.
            easy.set(CURLOPT_PROXY, "")
        }
        setCredentials(toOrigin: true)
        if request.handlesCookies {
            if let share { easy.set(CURLOPT_SHARE, pointer: share) }
            easy.set(CURLOPT_COOKIEFILE, "") // turn the cookie engine on, reading no file
        }
        if let inactivity = request.inactivityTimeout, inactivity > 0 {
            // Fewer than 1 byte/s on average over that many seconds (libcurl counts whole seconds, at least 1).
            easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
            easy.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(inactivity.rounded(.up))))
        }
        if request.allowsInvalidCertificates {
            easy.set(CURLOPT_SSL_VERIFYPEER, 0)
            easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        configureTLS(request.tls)
        if let limit = request.maximumResponseSize {
            // Refuses a declared length over the limit early. libcurl compares the encoded length, which for an
            // encoded body may exceed the decoded limit a little: the exact checks are ours (header and write
            // callbacks).
            easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: Self.encodedLimit(for: limit))
        }
        _ = wi_easy_setopt_write_callback(easy.raw, CURLOPT_WRITEFUNCTION, writeCallback)
        easy.set(CURLOPT_WRITEDATA, pointer: me)
        _ = wi_easy_setopt_write_callback(easy.raw, CURLOPT_HEADERFUNCTION, headerCallback)
        easy.set(CURLOPT_HEADERDATA, pointer: me)
        return true
    }
}
