import Foundation
import WebImage

/// Builds the one-line JSON report `webimage info` prints for a file.
enum InfoReport {
    static func json(path: String, data: Data) throws -> String {
        let format = ImageFormat.sniff(data)
        guard format != .unknown else { throw ImageCodecError.unknownFormat }
        guard format.isDecodable else { throw ImageCodecError.unsupportedFormat(format) }
        let fields: [(String, Any)] = [("path", path), ("format", format.rawValue), ("bytes", data.count)]
        return encode(fields)
    }

    /// Encodes ordered key/value pairs as a compact JSON object (keys keep their order, unlike JSONSerialization).
    static func encode(_ fields: [(String, Any)]) -> String {
        func value(_ v: Any) -> String {
            switch v {
            case let s as String: return quote(s)
            case let b as Bool: return b ? "true" : "false"
            case let i as Int: return String(i)
            case let d as Double: return d.isFinite ? String(d) : "null"
            case let a as [Any]: return "[" + a.map(value).joined(separator: ",") + "]"
            case Optional<Any>.none: return "null"
            default: return quote(String(describing: v))
            }
        }
        return "{" + fields.map { quote($0.0) + ":" + value($0.1) }.joined(separator: ",") + "}"
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
