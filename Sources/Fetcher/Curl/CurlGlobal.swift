internal import CWebImageCurl

/// `curl_global_init`, exactly once per process, before the first handle.
enum CurlGlobal {
    /// The result of the one `curl_global_init(CURL_GLOBAL_DEFAULT)` call (0 = CURLE_OK).
    static let initResult: Int = Int(curl_global_init(Int(CURL_GLOBAL_DEFAULT)).rawValue)

    /// Runs the global initialisation if it has not run yet. Thread-safe (a `static let`).
    static func ensureInitialized() {
        _ = initResult
    }
}
