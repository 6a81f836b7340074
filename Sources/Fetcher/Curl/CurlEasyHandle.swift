internal import CWebImageCurl
internal import CWebImageCurlShims
import Synchronization

/// A libcurl easy handle (`CURL *`) with the memory it lends libcurl: the header list and the error buffer.
///
/// Confined to the network thread that created it: created, configured, performed and freed there (checked in
/// debug builds). Not Sendable.
final class CurlEasyHandle {
    /// Easy handles alive in the process (tests check that none leaks).
    static let liveCount = Atomic<Int>(0)

    let raw: UnsafeMutableRawPointer
    private let owner: NetworkThread
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var resolveList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Wraps `curl_easy_init`; nil when libcurl cannot allocate a handle.
    init?(owner: NetworkThread) {
        owner.assertOnThread()
        CurlGlobal.ensureInitialized()
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        self.owner = owner
        Self.liveCount.add(1, ordering: .relaxed)
        let size = Int(wi_curl_error_size())
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
        _ = wi_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        owner.assertOnThread()
        curl_easy_cleanup(raw) // before freeing what it borrowed
        curl_slist_free_all(headerList)
        curl_slist_free_all(resolveList)
        errorBuffer.deallocate()
        Self.liveCount.subtract(1, ordering: .relaxed)
    }

    /// Wraps `curl_easy_setopt` for a `long` option.
    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> Bool {
        owner.assertOnThread()
        return wi_easy_setopt_long(raw, option, value) == CURLE_OK
    }

    /// Wraps `curl_easy_setopt` for a `curl_off_t` option.
    @discardableResult
    func set(_ option: CURLoption, offset value: Int64) -> Bool {
        owner.assertOnThread()
        return wi_easy_setopt_off(raw, option, curl_off_t(value)) == CURLE_OK
    }

    /// Wraps `curl_easy_setopt` for a string option (libcurl copies the string).
    @discardableResult
    func set(_ option: CURLoption, _ value: String) -> Bool {
        owner.assertOnThread()
        return wi_easy_setopt_pointer(raw, option, value) == CURLE_OK
    }

    /// Wraps `curl_easy_setopt` for a pointer option (the pointee must outlive the handle's use of it).
    @discardableResult
    func set(_ option: CURLoption, pointer value: UnsafeRawPointer?) -> Bool {
        owner.assertOnThread()
        return wi_easy_setopt_pointer(raw, option, value) == CURLE_OK
    }

    /// Sets `CURLOPT_HTTPHEADER` to `lines`, keeping the list alive until the handle is freed.
    func setHeaders(_ lines: [String]) {
        setList(CURLOPT_HTTPHEADER, lines, keptIn: &headerList)
    }

    /// Sets `CURLOPT_RESOLVE` to `entries` (`host:port:address`), keeping the list alive until the handle is
    /// freed (libcurl reads it when the transfer starts, not when it is set).
    func setResolve(_ entries: [String]) {
        setList(CURLOPT_RESOLVE, entries, keptIn: &resolveList)
    }

    /// Sets a `curl_slist` option to `lines`; `slot` keeps the list (freeing the one it held) for the handle.
    private func setList(_ option: CURLoption, _ lines: [String], keptIn slot: inout UnsafeMutablePointer<curl_slist>?) {
        owner.assertOnThread()
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        _ = wi_easy_setopt_pointer(raw, option, list)
        curl_slist_free_all(slot)
        slot = list
    }

    /// Wraps `curl_easy_getinfo` for a `long` result (0 when unavailable).
    func info(_ info: CURLINFO) -> Int {
        owner.assertOnThread()
        var value = 0
        return wi_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : 0
    }

    /// Wraps `curl_easy_getinfo` for a `curl_off_t` result (-1 when unavailable).
    func info(offset info: CURLINFO) -> Int64 {
        owner.assertOnThread()
        var value: curl_off_t = -1
        return wi_easy_getinfo_off(raw, info, &value) == CURLE_OK ? Int64(value) : -1
    }

    /// Wraps `curl_easy_getinfo` for a string result.
    func info(string info: CURLINFO) -> String? {
        owner.assertOnThread()
        var value: UnsafePointer<CChar>?
        guard wi_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// The message libcurl wrote for the last failure, or `curl_easy_strerror(code)` when it wrote none.
    func errorMessage(for code: Int) -> String {
        let message = String(cString: errorBuffer)
        guard message.isEmpty else { return message }
        return String(cString: curl_easy_strerror(CURLcode(rawValue: UInt32(truncatingIfNeeded: code))))
    }
}

@available(*, unavailable)
extension CurlEasyHandle: Sendable {}
