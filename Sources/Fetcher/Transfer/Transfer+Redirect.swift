import Foundation
internal import CWebImageCurl

/// Redirects, followed by the fetcher rather than by libcurl (`CURLOPT_FOLLOWLOCATION` is off).
///
/// A redirect response completes as a transfer of its own; libcurl then reports the URL it would have
/// followed (`CURLINFO_REDIRECT_URL`: its own choice among the `Location` lines, resolved against the URL that
/// sent it), read as libcurl's own following reads it (`CurlURL.resolvingRedirect`: a space is
/// percent-encoded, not fatal). That URL, and only it, is checked — scheme, `sourcePolicy.allowedHosts` (hosts read by libcurl's
/// URL parser), the redirect limit, the time left — and then set as the handle's next URL. There is no second
/// parser of `Location` to disagree with the one that connects: an attacker's `Location : x`, empty
/// `Location:` or status line between fields cannot point the check at one URL and the transfer at another.
extension Transfer {
    /// What the network loop does with a transfer that libcurl reports complete.
    enum RedirectStep {
        /// Not a redirect: complete the transfer with libcurl's result.
        case complete
        /// The handle is set up for the redirect's target: attach it again.
        case follow
        /// A redirect that must not be followed: fail with this error.
        case fail(FetchError)
    }

    /// Whether an HTTP status is a redirect libcurl would follow (every 3xx but 304 Not Modified).
    static func isRedirect(_ status: Int) -> Bool { (300..<400).contains(status) && status != 304 }

    /// Decides what follows a completed response; for a redirect allowed to go on, reconfigures the handle for
    /// its target (the handle must already be detached from the multi handle).
    func followRedirect(afterCompletionWith curlCode: Int) -> RedirectStep {
        let headIsComplete = (CurlCode(rawValue: curlCode) == .ok && abort == nil) || abort == .redirectHead
        guard isHTTP, file == nil, headIsComplete else { return .complete }
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        guard Self.isRedirect(status) else { return .complete }
        // libcurl's own target; nil or empty when the response had no non-empty `Location`. Without following,
        // libcurl hands back a target it cannot parse strictly (an absolute one with a space) as written: read it
        // as libcurl's own following would (percent-encoded), and check and follow that one string.
        // A transfer stopped at the redirect's head never completes, and libcurl computes CURLINFO_REDIRECT_URL
        // only on completion: then the `Location` line libcurl's own rule picks is read instead (the header API,
        // `curl_easy_header`, unfolds continuation lines into it, which libcurl's redirect does not).
        let reported = abort == .redirectHead ? headerParser.libcurlLocation : easy.info(string: CURLINFO_REDIRECT_URL)
        guard let reported, !reported.isEmpty else {
            return .fail(.invalidRedirect(status: status, target: nil))
        }
        let base = easy.info(string: CURLINFO_EFFECTIVE_URL) ?? request.url.absoluteString
        let target = CurlURL.resolvingRedirect(reported, against: base) ?? reported
        // libcurl writes the scheme of its target lowercased; a file URL has no host, so it is told apart first.
        if target.hasPrefix("file:"), let url = URL(string: target) { return .fail(.fileURLRefused(url)) }
        guard let parsed = CurlURL(target) else { return .fail(.invalidRedirect(status: status, target: target)) }
        let targetURL = URL(string: target) ?? request.url
        // Another scheme (ftp:, gopher:…): a target we refuse to follow, like a host off the allow-list.
        guard parsed.scheme == "http" || parsed.scheme == "https" else { return .fail(.redirectRefused(targetURL)) }
        guard request.sourcePolicy.allowsHost(parsed.hostForPolicy) else { return .fail(.redirectRefused(targetURL)) }
        guard redirects.count < request.maximumRedirects else {
            return .fail(.tooManyRedirects(limit: request.maximumRedirects))
        }
        let elapsed = ContinuousClock.now - startTime
        let left = request.timeout - (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        let leftMilliseconds = Int((left * 1_000).rounded(.down))
        guard leftMilliseconds >= 1 else { return .fail(.timedOut(curlCode: CurlCode.operationTimedOut.rawValue)) }

        redirects.append(currentResponse())
        guard easy.set(CURLOPT_URL, target) else { return .fail(.invalidRedirect(status: status, target: target)) }
        let requestOrigin = CurlURL(request.url.absoluteString)
        setCredentials(toOrigin: requestOrigin.map(parsed.isSameOrigin) ?? false,
                       toSameHost: requestOrigin?.host == parsed.host)
        easy.set(CURLOPT_TIMEOUT_MS, leftMilliseconds)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS,
                 min(leftMilliseconds, max(1, Int((request.connectTimeout * 1_000).rounded()))))
        headerParser.reset()
        discardedRedirectBytes = 0
        abort = nil
        return .follow
    }

    /// The largest redirect body read (and dropped) to keep its connection for the next hop: a declared
    /// `Content-Length` of at most 64 KiB (a redirect page is a few hundred bytes).
    static let maximumReadRedirectBody: Int64 = 64 << 10

    /// Whether the head just completed is a redirect whose body is not read: one delimited by the connection's
    /// close, chunked, or declared over `maximumReadRedirectBody` could drip until the timeout or run to the
    /// size limit, and nobody wants its bytes. libcurl following itself stops at the head of a
    /// `Connection: close` redirect too. Its connection is closed; a small declared body is still read.
    func stopsAtRedirectHead() -> Bool {
        guard isHTTP, Self.isRedirect(easy.info(CURLINFO_RESPONSE_CODE)) else { return false }
        guard let declared = headerParser.value("Content-Length").flatMap(Self.parseContentLength) else { return true }
        let isChunked = headerParser.value("Transfer-Encoding").map { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? false
        return isChunked || declared > Self.maximumReadRedirectBody
    }

    /// Whether the request's own host passes `sourcePolicy.allowedHosts`, read as libcurl reads the URL (the
    /// parser that will connect to it). Always true when the list is empty.
    func requestHostIsAllowed() -> Bool {
        guard !request.sourcePolicy.allowedHosts.isEmpty else { return true }
        guard let parsed = CurlURL(request.url.absoluteString) else { return false }
        return request.sourcePolicy.allowsHost(parsed.hostForPolicy)
    }
}
