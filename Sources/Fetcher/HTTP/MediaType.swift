/// A `Content-Type` value (RFC 9110 §8.3.1): `type/subtype` with parameters, names lowercased.
///
///     MediaType.parse("image/svg+xml; charset=UTF-8")  // type "image", subtype "svg+xml", charset "UTF-8"
///
/// - Important: A value type; thread-safe.
public struct MediaType: Sendable, Hashable {
    /// The top-level type, lowercased (`image`).
    public var type: String
    /// The subtype, lowercased (`webp`).
    public var subtype: String
    /// Parameters by lowercased name, values unquoted; the first of a repeated name wins.
    public var parameters: [String: String]

    /// `type/subtype`, lowercased.
    public var essence: String { "\(type)/\(subtype)" }

    /// Parses a `Content-Type` value; nil when it is not `token/token` followed by `; name=value` parameters
    /// (a malformed parameter is skipped, not fatal). Never traps.
    public static func parse(_ text: some StringProtocol) -> MediaType? {
        let value = String(decoding: text.utf8.trimmingHTTPWhitespace(), as: UTF8.self)
        let parts = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        guard let essence = parts.first else { return nil }
        let names = essence.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard names.count == 2 else { return nil }
        let type = String(decoding: names[0].utf8.trimmingHTTPWhitespace(), as: UTF8.self)
        let subtype = String(decoding: names[1].utf8.trimmingHTTPWhitespace(), as: UTF8.self)
        guard HTTPFieldList.isToken(type), HTTPFieldList.isToken(subtype) else { return nil }
        var parameters: [String: String] = [:]
        if parts.count == 2 {
            // Parameters share the list grammar with ';' for ','.
            let list = parts[1].replacingSemicolonsOutsideQuotes()
            for element in HTTPFieldList.elements(of: [list]).elements {
                if let argument = element.argument, parameters[element.name] == nil { parameters[element.name] = argument }
            }
        }
        return MediaType(type: type.lowercased(), subtype: subtype.lowercased(), parameters: parameters)
    }

    /// A media type from its parts (names are used as given).
    public init(type: String, subtype: String, parameters: [String: String] = [:]) {
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
    }
}

private extension Substring {
    /// The text with every `;` outside a quoted string turned into `,`.
    func replacingSemicolonsOutsideQuotes() -> String {
        var bytes = Array(utf8), quoted = false, index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): quoted.toggle()
            case UInt8(ascii: "\\") where quoted: index += 1
            case UInt8(ascii: ";") where !quoted: bytes[index] = UInt8(ascii: ",")
            default: break
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
