/// Percent-decoding and -encoding as thumbor's Python does them (`urllib.parse.unquote`/`quote`).
///
/// - Important: Stateless; thread-safe.
enum ThumborPercent {
    /// `text` with every `%XX` (hex, either case) replaced by its byte and the bytes read as UTF-8; a `%` not
    /// followed by two hex digits stays as it is (Python's `unquote`).
    ///
    /// - Throws: `ImageServiceError.badOptions` naming `part` when the bytes are not UTF-8.
    static func decode(_ text: String, part: String) throws(ImageServiceError) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let high = hex(bytes[i + 1]),
               let low = hex(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        guard let decoded = String(validating: out, as: UTF8.self) else {
            throw .badOptions("\(part): percent-encoded bytes that are not UTF-8")
        }
        return decoded
    }

    /// `text` as UTF-8 with every byte outside the letters, digits, `_.-~` and `safe` percent-encoded in upper
    /// case hex (Python's `quote(text, safe=safe)`).
    static func quote(_ text: String, safe: String) -> String {
        QueryString.escape(text, keeping: Set(safe.utf8))
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
