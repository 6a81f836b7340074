import CWebImageCurl
import CWebImageCurlShims
import Foundation

/// A plain libcurl easy transfer driven through the `wi_` shims only (no Fetcher code), to prove the shims
/// and `HTTPTestServer` together. Not thread-safe; one per test.
final class PlainCurl {
    /// What one `perform` observed.
    struct Result {
        var code: CURLcode
        var status: Int
        var body: [UInt8]
        var headerLines: [String]
        var writeCalls: Int

        /// The value of the last header named `name` (case-insensitive) in the final response.
        func header(_ name: String) -> String? {
            let prefix = name.lowercased() + ":"
            return headerLines.last { $0.lowercased().hasPrefix(prefix) }
                .map { String($0.dropFirst(prefix.count)).trimmingCharacters(in: .whitespacesAndNewlines) }
        }
    }

    private final class Sink {
        var body: [UInt8] = []
        var headerLines: [String] = []
        var writeCalls = 0
    }

    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?

    init() throws {
        guard let easy = curl_easy_init() else { throw CocoaError(.featureUnsupported) }
        self.easy = easy
    }

    deinit {
        curl_slist_free_all(headerList)
        curl_easy_cleanup(easy)
    }

    func set(_ option: CURLoption, _ value: Int) { _ = wi_easy_setopt_long(easy, option, value) }
    func set(_ option: CURLoption, _ value: String) { _ = wi_easy_setopt_pointer(easy, option, value) }

    /// Replaces the request headers.
    func setHeaders(_ lines: [String]) {
        curl_slist_free_all(headerList)
        headerList = nil
        for line in lines { headerList = curl_slist_append(headerList, line) }
        _ = wi_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList)
    }

    /// Performs a blocking GET of `url` on this handle (options set before are kept).
    func get(_ url: URL) -> Result {
        let sink = Sink()
        let pointer = Unmanaged.passUnretained(sink).toOpaque()
        set(CURLOPT_URL, url.absoluteString)
        set(CURLOPT_NOSIGNAL, 1)
        _ = wi_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            guard let data, let user else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
            sink.writeCalls += 1
            sink.body += UnsafeRawBufferPointer(start: data, count: size * count)
            return size * count
        }
        _ = wi_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, pointer)
        _ = wi_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            guard let data, let user else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
            if line.hasPrefix("HTTP/") { sink.headerLines.removeAll() }
            sink.headerLines.append(line.trimmingCharacters(in: .whitespacesAndNewlines))
            return size * count
        }
        _ = wi_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, pointer)
        let code = withExtendedLifetime(sink) { curl_easy_perform(easy) }
        var status = 0
        _ = wi_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return Result(code: code, status: status, body: sink.body, headerLines: sink.headerLines,
                      writeCalls: sink.writeCalls)
    }

    /// One GET on a fresh handle, after `configure`.
    static func get(_ url: URL, configure: (PlainCurl) -> Void = { _ in }) throws -> Result {
        let curl = try PlainCurl()
        configure(curl)
        return curl.get(url)
    }
}
