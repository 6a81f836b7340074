import Foundation
internal import CWebImageCurl

extension Transfer {
    /// Turns libcurl's result and the response status into the operation's result.
    func outcome(for curlCode: Int) -> Result<FetchResult, FetchError> {
        let code = CurlCode(rawValue: curlCode)
        func isOne(of codes: CurlCode...) -> Bool { code.map(codes.contains) ?? false }
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        if code != .ok, let refused = refusedAddress {
            return .failure(.addressRefused(address: refused.address.description, category: refused.category))
        }
        if code != .ok, abort == .redirectRefused, let target = refusedRedirect {
            return .failure(.redirectRefused(target))
        }
        if code == .ok {
            if isHTTP && status == 304 { return .failure(.notModified(currentResponse())) }
            if isHTTP && status >= 400 { return .failure(.httpStatus(status, currentResponse())) }
            return .success(FetchResult(response: currentResponse(), body: Data()))
        }
        if (code == .writeError && abort == .httpStatus) || code == .httpReturnedError {
            if status == 304 { return .failure(.notModified(currentResponse())) }
            return .failure(.httpStatus(status, currentResponse()))
        }
        if (code == .writeError && abort == .tooLarge) || code == .filesizeExceeded {
            return .failure(.responseTooLarge(limit: request.maximumResponseSize ?? 0))
        }
        let osErrno = Int32(truncatingIfNeeded: easy.info(CURLINFO_OS_ERRNO))
        let message = easy.errorMessage(for: curlCode)
        if code == .operationTimedOut {
            return .failure(.timedOut(curlCode: curlCode))
        }
        if isOne(of: .couldntConnect, .couldntResolveHost, .couldntResolveProxy) {
            return .failure(.connectionFailed(curlCode: curlCode, errno: osErrno, message: message))
        }
        if code == .partialFile {
            let expected = response?.expectedContentLength ?? currentResponse().expectedContentLength
            return .failure(.incompleteBody(received: receivedCount, expected: expected))
        }
        if isOne(of: .recvError, .sendError, .gotNothing, .http2, .http2Stream) {
            return .failure(.connectionLost(curlCode: curlCode, errno: osErrno, message: message))
        }
        if code == .tooManyRedirects {
            return .failure(.tooManyRedirects(limit: request.maximumRedirects))
        }
        if isOne(of: .peerFailedVerification, .sslConnectError, .sslCertProblem,
                 .sslCACertBadFile, .sslIssuerError) {
            return .failure(.tlsFailure(curlCode: curlCode, message: message))
        }
        if code == .unsupportedProtocol, let target = redirectTarget(), target.isFileURL {
            return .failure(.fileURLRefused(target))
        }
        if isOne(of: .unsupportedProtocol, .urlMalformat) {
            // A redirect's target names the URL refused, so callers can tell the origin's fault from their own.
            return .failure(.invalidURL(redirectTarget()?.absoluteString ?? request.url.absoluteString))
        }
        if code == .badContentEncoding {
            return .failure(.badContentEncoding(message: message))
        }
        return .failure(.transport(curlCode: curlCode, errno: osErrno, message: message))
    }

    /// The target of the response head just completed when it is a redirect the source policy's
    /// `allowedHosts` does not allow; nil otherwise.
    func refusedRedirectTarget() -> URL? {
        guard isHTTP, !request.sourcePolicy.allowedHosts.isEmpty,
              (300..<400).contains(easy.info(CURLINFO_RESPONSE_CODE)), let target = redirectTarget() else { return nil }
        return request.sourcePolicy.allowsHost(target.host) ? nil : target
    }

    /// Where the last response redirected to (its `Location`, resolved against the URL that sent it).
    func redirectTarget() -> URL? {
        guard let location = headerParser.value("Location") else { return nil }
        let base = easy.info(string: CURLINFO_EFFECTIVE_URL).flatMap(URL.init(string:)) ?? request.url
        return URL(string: location, relativeTo: base)?.absoluteURL
    }
}
