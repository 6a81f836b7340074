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
        if isOne(of: .peerFailedVerification, .sslConnectError, .sslCertProblem, .sslCipher,
                 .sslCACertBadFile, .sslIssuerError, .sslPinnedPublicKeyMismatch) {
            return .failure(.tlsFailure(curlCode: curlCode, message: message))
        }
        if isOne(of: .unsupportedProtocol, .urlMalformat) {
            // After a redirect, the URL libcurl could not use is the origin's target (it passed the checks in
            // Transfer+Redirect.swift, but e.g. an internationalised host libcurl cannot convert in this locale):
            // the origin's failure, not the caller's URL.
            if let hop = redirects.last {
                return .failure(.invalidRedirect(status: hop.statusCode ?? 0,
                                                 target: easy.info(string: CURLINFO_EFFECTIVE_URL)))
            }
            return .failure(.invalidURL(request.url.absoluteString))
        }
        if code == .badContentEncoding {
            return .failure(.badContentEncoding(message: message))
        }
        return .failure(.transport(curlCode: curlCode, errno: osErrno, message: message))
    }
}
