internal import CWebImageCurl
internal import CWebImageCurlShims

/// The libcurl multi handle (`CURLM *`) of one network thread, and the share handle (`CURLSH *`) that holds its
/// cookie jar.
///
/// Confined to its network thread, except `wakeUp()` (`curl_multi_wakeup` is thread-safe), which
/// `NetworkThread` calls under its lock while the handle is alive. Not Sendable.
final class CurlMultiHandle {
    let raw: UnsafeMutableRawPointer
    /// The share handle for cookies (all easy handles live on one thread, so no lock callbacks are needed).
    let share: UnsafeMutableRawPointer?
    private let owner: NetworkThread

    /// Wraps `curl_multi_init` and `curl_share_init`; nil when libcurl cannot allocate the multi handle.
    init?(owner: NetworkThread) {
        owner.assertOnThread()
        CurlGlobal.ensureInitialized()
        guard let raw = curl_multi_init() else { return nil }
        self.raw = raw
        self.owner = owner
        share = curl_share_init()
        if let share {
            _ = wi_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        }
        // HTTP/2 multiplexing where offered (the default since 7.62, stated for clarity).
        _ = wi_multi_setopt_long(raw, CURLMOPT_PIPELINING, 2) // CURLPIPE_MULTIPLEX
    }

    deinit {
        owner.assertOnThread()
        curl_multi_cleanup(raw)
        if let share { curl_share_cleanup(share) }
    }

    /// Wraps `curl_multi_add_handle`.
    func add(_ easy: CurlEasyHandle) -> Bool {
        owner.assertOnThread()
        return curl_multi_add_handle(raw, easy.raw) == CURLM_OK
    }

    /// Wraps `curl_multi_remove_handle`.
    func remove(_ easy: CurlEasyHandle) {
        owner.assertOnThread()
        _ = curl_multi_remove_handle(raw, easy.raw)
    }

    /// Wraps `curl_multi_perform`: drives every transfer as far as it can go without blocking.
    func perform() {
        owner.assertOnThread()
        var running: Int32 = 0
        _ = curl_multi_perform(raw, &running)
    }

    /// Wraps `curl_multi_poll`: waits up to `timeoutMilliseconds` for socket activity, a libcurl timer or
    /// `wakeUp()`.
    func poll(timeoutMilliseconds: Int32) {
        owner.assertOnThread()
        var numberOfDescriptors: Int32 = 0
        _ = curl_multi_poll(raw, nil, 0, timeoutMilliseconds, &numberOfDescriptors)
    }

    /// Wraps `curl_multi_wakeup`. Thread-safe.
    func wakeUp() {
        _ = curl_multi_wakeup(raw)
    }

    /// Wraps `curl_multi_info_read`: the next finished transfer (its easy pointer and result), or nil.
    func nextCompleted() -> (easy: UnsafeMutableRawPointer, result: Int)? {
        owner.assertOnThread()
        var easy: UnsafeMutableRawPointer?
        var message = CURLMSG_NONE
        var result = CURLE_OK
        var remaining: Int32 = 0
        while wi_multi_info_read(raw, &easy, &message, &result, &remaining) != 0 {
            if message == CURLMSG_DONE, let easy { return (easy, Int(result.rawValue)) }
        }
        return nil
    }
}

@available(*, unavailable)
extension CurlMultiHandle: Sendable {}
