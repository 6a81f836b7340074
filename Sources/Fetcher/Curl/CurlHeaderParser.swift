import Foundation

/// Collects the header lines libcurl hands to `CURLOPT_HEADERFUNCTION`, keeping only the last response's
/// (redirects and `100 Continue` each start a new block with a status line).
///
/// Not thread-safe; owned by one `Transfer`.
struct CurlHeaderParser {
    private(set) var headers: [FetchResponse.Header] = []

    /// Feeds one raw header line (with its CRLF).
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers.removeAll(keepingCapacity: true)
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return } // the blank line ending the block
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return }
        headers.append(FetchResponse.Header(name: String(name), value: value))
    }

    /// The first value of `name` (case-insensitive).
    func value(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
