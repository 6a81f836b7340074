import Foundation

/// Collects the header lines libcurl hands to `CURLOPT_HEADERFUNCTION`, keeping only the last response's
/// (redirects and `100 Continue` each start a new block with a status line).
///
/// It reads header fields as RFC 9112 §5 says a recipient must, so that it agrees with libcurl on every line
/// that matters (the differential tests make the two disagree on purpose):
/// - a status line is recognised only as the first line of a block, never between fields;
/// - a line with whitespace between the field name and its colon is not a field (libcurl matches
///   `Location:` literally, so a `Location : x` line is no redirect to it; neither is it one to us);
/// - a name must be a token; an obsolete folded line (starting with a space or tab) continues the previous
///   value with one space;
/// - lines after the blank line that ends a head, until the next status line, are trailers (libcurl hands
///   chunked and HTTP/2 trailers to the same callback after the body): they are not header fields and are
///   dropped (RFC 9110 §6.5.1: a recipient must not merge them into the header section), so a trailer cannot
///   give a redirect a year of freshness or a response a second `Content-Type`.
///
/// Redirect targets are never read from here: libcurl's own (`CURLINFO_REDIRECT_URL`) is the only one used.
///
/// Not thread-safe; owned by one `Transfer`.
struct CurlHeaderParser {
    private(set) var headers: [FetchResponse.Header] = []
    /// Whether the next line starts a block (the first line, or the one after a blank line).
    private var atBlockStart = true
    /// Whether the current head has ended (its blank line came): what follows, up to a status line, is trailers.
    private var isHeadComplete = false
    /// The current head's redirect target as libcurl 7.88 picks it for `CURLINFO_REDIRECT_URL` (`http.c`): the
    /// first line that starts with `Location:` (case-insensitively; `Location : x` does not) whose value,
    /// trimmed of `ISSPACE`, is not empty; a folded continuation is no part of it. Not resolved. Used only when a
    /// transfer stops at a redirect's head, where libcurl computes no `CURLINFO_REDIRECT_URL`.
    private(set) var libcurlLocation: String?

    /// Feeds one raw header line (with its CRLF).
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var line = bytes[...]
        while let last = line.last, last == 0x0A || last == 0x0D { line = line.dropLast() }
        if line.isEmpty { // the blank line ending the block
            atBlockStart = true
            isHeadComplete = true
            return
        }
        defer { atBlockStart = false }
        if atBlockStart, line.starts(with: Array("HTTP/".utf8)) {
            headers.removeAll(keepingCapacity: true)
            isHeadComplete = false
            libcurlLocation = nil
            return
        }
        guard !isHeadComplete else { return } // a trailer
        if libcurlLocation == nil, let value = Self.locationValue(line) { libcurlLocation = value }
        if let first = line.first, first == 0x20 || first == 0x09 {
            guard !atBlockStart, let last = headers.indices.last else { return }
            let continuation = String(decoding: line.trimmingHTTPWhitespace(), as: UTF8.self)
            if !continuation.isEmpty {
                headers[last].value = headers[last].value.isEmpty ? continuation : headers[last].value + " " + continuation
            }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(HTTPFieldList.isTokenByte) else { return }
        let value = line[line.index(after: colon)...].trimmingHTTPWhitespace()
        headers.append(FetchResponse.Header(name: String(decoding: name, as: UTF8.self),
                                            value: String(decoding: value, as: UTF8.self)))
    }

    /// Starts over for the next response of the same transfer (a redirect followed on the same handle).
    mutating func reset() {
        headers.removeAll(keepingCapacity: true)
        atBlockStart = true
        isHeadComplete = false
        libcurlLocation = nil
    }

    /// The value of a `Location:` line as libcurl's `checkprefix` and `Curl_copy_header_value` read it; nil for
    /// another line or an empty value.
    private static func locationValue(_ line: Slice<UnsafeRawBufferPointer>) -> String? {
        let prefix = Array("location:".utf8)
        guard line.count >= prefix.count,
              zip(line.prefix(prefix.count), prefix).allSatisfy({ ((0x41...0x5A).contains($0) ? $0 | 0x20 : $0) == $1 })
        else { return nil }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        var value = line.dropFirst(prefix.count)
        while let first = value.first, isSpace(first) { value = value.dropFirst() }
        while let last = value.last, isSpace(last) { value = value.dropLast() }
        return value.isEmpty ? nil : String(decoding: value, as: UTF8.self)
    }

    /// The first value of `name` (case-insensitive).
    func value(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
