import Foundation

extension Transfer {
    /// Reads the next chunk of a `file` transfer and delivers it like a network chunk. Returns nil while the
    /// file has more to read, the outcome once it is finished (the caller detaches, then `finish`es with it).
    /// `madeProgress` tells the loop whether to poll again at once.
    ///
    /// The request's `timeout` bounds the whole read (a "regular" file that never ends or keeps answering
    /// `EAGAIN`, as some `/proc` and FUSE files do); its `maximumResponseSize` bounds the bytes held even if
    /// the file grows while it is read. A file that ends before the size `fstat` reported (truncated while it
    /// is read) fails with `incompleteBody`.
    func readFileChunk(madeProgress: inout Bool) -> Result<FetchResult, FetchError>? {
        guard let file else { return .failure(.invalidURL(request.url.absoluteString)) }
        if ContinuousClock.now - startTime > .milliseconds(Int64((request.timeout * 1_000).rounded())) {
            return .failure(.timedOut(curlCode: CurlCode.operationTimedOut.rawValue))
        }
        if response == nil { deliverResponse() }
        let step: (Bool, Result<FetchResult, FetchError>?) = file.readChunk { step in
            switch step {
            case .bytes(let chunk):
                guard receive(chunk) else {
                    return (true, .failure(.responseTooLarge(limit: request.maximumResponseSize ?? 0)))
                }
                return (true, nil)
            case .wouldBlock:
                return (false, nil)
            case .end:
                // Fewer bytes than `fstat` reported: the file was truncated while it was read. Not a success:
                // the pipeline would decode or cache a partial image (HTTP reports the same as incompleteBody).
                guard receivedCount >= file.size else {
                    return (true, .failure(.incompleteBody(received: receivedCount, expected: file.size)))
                }
                return (true, .success(FetchResult(response: currentResponse(), body: Data())))
            case .failure(let error):
                return (true, .failure(error))
            }
        }
        madeProgress = madeProgress || step.0
        return step.1
    }
}
