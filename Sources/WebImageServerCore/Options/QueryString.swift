import Foundation

/// Parsing and writing of URL query strings for the image service: `name=value` pairs split on `&`,
/// percent-decoded (a `+` stays a plus: sources are URLs, not form fields).
///
/// - Important: Stateless; thread-safe.
public enum QueryString {
    /// The pairs of `query` (the part after `?`, without it), in order; a pair without `=` has an empty value.
    ///
    /// - Throws: `ImageServiceError.badOptions` for invalid percent-encoding.
    public static func parse(_ query: Substring) throws(ImageServiceError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let nameEnd = part.firstIndex(of: "=") ?? part.endIndex
            let rawName = part[..<nameEnd]
            let rawValue = nameEnd == part.endIndex ? "" : part[part.index(after: nameEnd)...]
            guard let name = String(rawName).removingPercentEncoding,
                  let value = String(rawValue).removingPercentEncoding else {
                throw .badOptions("invalid percent-encoding in \(part.prefix(64))")
            }
            pairs.append((name, value))
        }
        return pairs
    }

    /// `text` with every byte outside RFC 3986's unreserved set (`A–Z a–z 0–9 - . _ ~`) and `safe` percent-encoded,
    /// upper case hex: one spelling per value, so signer and server agree (`safe` empty), and Python's
    /// `quote(text, safe=…)` for thumbor's URLs.
    public static func escape(_ text: String, keeping safe: Set<UInt8> = []) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where safe.contains(byte):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// The canonical form of `pairs` that signatures cover: every pair except `sig`, sorted by name (then by
    /// value), each as `escape(name)=escape(value)`, joined by `&`.
    ///
    /// ```swift
    /// QueryString.canonical([("w", "400"), ("url", "https://a.example/x.jpg")])
    /// // "url=https%3A%2F%2Fa.example%2Fx.jpg&w=400"
    /// ```
    public static func canonical(_ pairs: [(name: String, value: String)]) -> String {
        pairs.filter { $0.name != "sig" }
            .sorted { ($0.name, $0.value) < ($1.name, $1.value) }
            .map { "\(escape($0.name))=\(escape($0.value))" }
            .joined(separator: "&")
    }
}
