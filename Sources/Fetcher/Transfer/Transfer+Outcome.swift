import Foundation
internal import CWebImageCurl

extension Transfer {
    /// Turns libcurl's result and the response status into the operation's result.
    func outcome(for code: CURLcode) -> Result<FetchResult, FetchError> {
        func isOne(of codes: CURLcode...) -> Bool { codes.contains(code) }
        let curlCode = Int(code.rawValue)
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        if code == CURLE_OK {
            if isHTTP && status == 304 { return .failure(.notModified(currentResponse())) }
            if isHTTP && status >= 400 { return .failure(.httpStatus(status, currentResponse())) }
            return .success(FetchResult(response: currentResponse(), body: Data()))
        }
        if (code == CURLE_WRITE_ERROR && abort == .httpStatus) || code == CURLE_HTTP_RETURNED_ERROR {
            if status == 304 { return .failure(.notModified(currentResponse())) }
            return .failure(.httpStatus(status, currentResponse()))
        }
        if (code == CURLE_WRITE_ERROR && abort == .tooLarge) || code == CURLE_FILESIZE_EXCEEDED {
            return .failure(.responseTooLarge(limit: request.maximumResponseSize ?? 0))
        }
        let osErrno = Int32(truncatingIfNeeded: easy.info(CURLINFO_OS_ERRNO))
        let message = easy.errorMessage(for: code)
        if code == CURLE_OPERATION_TIMEDOUT {
            return .failure(.timedOut(curlCode: curlCode))
        }
        if isOne(of: CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY) {
            return .failure(.connectionFailed(curlCode: curlCode, errno: osErrno, message: message))
        }
        if code == CURLE_PARTIAL_FILE {
            let expected = response?.expectedContentLength ?? currentResponse().expectedContentLength
            return .failure(.incompleteBody(received: receivedCount, expected: expected))
        }
        if isOne(of: CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM) {
            return .failure(.connectionLost(curlCode: curlCode, errno: osErrno, message: message))
        }
        if code == CURLE_TOO_MANY_REDIRECTS {
            return .failure(.tooManyRedirects(limit: request.maximumRedirects))
        }
        if isOne(of: CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM,
                 CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR) {
            return .failure(.tlsFailure(curlCode: curlCode, message: message))
        }
        if isOne(of: CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT) {
            return .failure(.invalidURL(request.url.absoluteString))
        }
        if isOne(of: CURLE_FILE_COULDNT_READ_FILE, CURLE_READ_ERROR) {
            return .failure(.fileUnreadable(path: request.url.path, errno: osErrno))
        }
        if code == CURLE_BAD_CONTENT_ENCODING {
            return .failure(.badContentEncoding(message: message))
        }
        return .failure(.transport(curlCode: curlCode, errno: osErrno, message: message))
    }
}
