import Foundation

/// A `data:` URL (RFC 2397): `data:[<media type>][;base64],<data>`, as feeds scraped from HTML carry inline
/// images. Decoded by the fetcher itself, within the request's `maximumResponseSize` (counted on the decoded
/// bytes; the URL's text, already in memory, is the bound of what decoding allocates), never through libcurl
/// and never queued behind transfers.
///
/// - Important: Pure functions; thread-safe.
enum DataURL {
    /// The bytes and media type of `url`, or the error a fetch reports: `invalidURL` when it is not a
    /// well-formed data URL (no comma, bad base64, bad percent-encoding), `responseTooLarge` past `limit`.
    static func decode(_ url: URL, limit: Int64?) -> Result<(body: Data, mediaType: String), FetchError> {
        let whole = url.absoluteString
        // A fragment names a part of the resource, not of its bytes.
        let text = whole.firstIndex(of: "#").map { String(whole[..<$0]) } ?? whole
        guard text.utf8.count > 5, text.prefix(5).lowercased() == "data:",
              let comma = text.firstIndex(of: ",") else { return .failure(.invalidURL(whole)) }
        let header = text[text.index(text.startIndex, offsetBy: 5)..<comma]
        let payload = text[text.index(after: comma)...]
        let parameters = header.split(separator: ";", omittingEmptySubsequences: false)
        let isBase64 = parameters.count > 1 && parameters.last?.lowercased() == "base64"
        let mediaType = parameters.first.map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? "text/plain;charset=US-ASCII"
        guard let body = try? decodedBody(payload, isBase64: isBase64) else { return .failure(.invalidURL(whole)) }
        if let limit, Int64(body.count) > limit { return .failure(.responseTooLarge(limit: limit)) }
        return .success((body, mediaType))
    }

    private struct Malformed: Error {}

    /// The payload's bytes: percent-decoded, then base64-decoded when asked (whitespace ignored, as browsers
    /// do for inline images broken over lines).
    private static func decodedBody(_ payload: Substring, isBase64: Bool) throws -> Data {
        let bytes = try percentDecoded(payload)
        guard isBase64 else { return Data(bytes) }
        let compact = bytes.filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        guard let data = Data(base64Encoded: Data(compact), options: []) ?? Data(base64Encoded: Data(padded(compact))) else {
            throw Malformed()
        }
        return data
    }

    /// Base64 without its `=` padding, padded.
    private static func padded(_ bytes: [UInt8]) -> [UInt8] {
        bytes + Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
    }

    private static func percentDecoded(_ text: Substring) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { out.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw Malformed()
            }
            out.append(high << 4 | low)
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
