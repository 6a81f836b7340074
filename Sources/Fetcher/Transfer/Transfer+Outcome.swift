import Foundation
internal import CWebImageCurl

extension Transfer {
    /// Turns libcurl's result and the response status into the operation's result.
    func outcome(for curlCode: Int) -> Result<FetchResult, FetchError> {
        let code = CurlCode(rawValue: curlCode)
        func isOne(of codes: CurlCode...) -> Bool { code.map(codes.contains) ?? false }
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        if code == .ok {
            // libcurl's FILE protocol "reads" a directory as an empty body.
            if request.url.isFileURL, let errno = Self.fileErrno(request.url.path), errno == EISDIR {
                return .failure(.fileUnreadable(path: request.url.path, errno: errno))
            }
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
        if isOne(of: .unsupportedProtocol, .urlMalformat) {
            return .failure(.invalidURL(request.url.absoluteString))
        }
        if isOne(of: .fileCouldntReadFile, .readError) {
            // libcurl's FILE protocol does not record errno (CURLINFO_OS_ERRNO is 0): ask the file system.
            let errno = osErrno != 0 ? osErrno : (Self.fileErrno(request.url.path) ?? EIO)
            return .failure(.fileUnreadable(path: request.url.path, errno: errno))
        }
        if code == .badContentEncoding {
            return .failure(.badContentEncoding(message: message))
        }
        return .failure(.transport(curlCode: curlCode, errno: osErrno, message: message))
    }

    /// Why `path` cannot be read as a file: `ENOENT`, `EACCES`, `EISDIR`, …; `nil` when it can.
    static func fileErrno(_ path: String) -> Int32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno }
        if (info.st_mode & S_IFMT) == S_IFDIR { return EISDIR }
        return access(path, R_OK) == 0 ? nil : errno
    }
}
