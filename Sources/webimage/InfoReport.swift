import Foundation
import WebImage

/// Builds the one-line JSON report `webimage info` prints for a file.
enum InfoReport {
    /// The report for `data` read from `path`: format, size, frames, loop count (`loop_count` as stored, `null`
    /// when absent; `plays` = total plays, 0 = forever), durations, alpha, progressive/interlaced, EXIF
    /// orientation (`null` without a tag), and what the file says about its colours: `icc_bytes` (the embedded ICC
    /// profile's size), `cicp` ("primaries/transfer/matrix/full|limited"), `png_gamma`, `declares_srgb` (each
    /// `null`/false when absent; all `null` and false for an untagged file, which is sRGB). The colour fields come
    /// from a first-frame decode at 8 px with `ColorManagement.preserve` (the header readers do not parse colour).
    static func json(path: String, data: Data) throws -> String {
        // The registry decides (a registered codec may read a format `sniff` does not know).
        let info = try ImageDecoder.info(data)
        let fields: [(String, Any)] = [
            ("path", path), ("format", info.format.rawValue), ("bytes", data.count),
            ("width", info.width), ("height", info.height), ("frames", info.frameCount),
            ("loop_count", info.storedLoopCount as Any), ("plays", info.loopCount),
            ("durations", info.durations), ("has_alpha", info.hasAlpha), ("progressive", info.isProgressive),
            ("exif_orientation", info.hasOrientationTag ? info.orientation.rawValue as Any : Optional<Int>.none as Any),
        ] + colorFields(data)
        return encode(fields)
    }

    /// The colour fields (see `json`); `null`s when the small decode fails.
    static func colorFields(_ data: Data) -> [(String, Any)] {
        let options = DecodeOptions(firstFrameOnly: true, keepsOriginalData: false, maxPixelSize: 8, colorManagement: .preserve)
        let colorSpace = (try? ImageDecoder.decode(data, options: options))?.colorSpace
        let cicp = colorSpace?.cicp.map {
            "\($0.colorPrimaries)/\($0.transferCharacteristics)/\($0.matrixCoefficients)/\($0.isFullRange ? "full" : "limited")"
        }
        return [("icc_bytes", colorSpace?.iccProfile?.count as Any), ("cicp", cicp as Any),
                ("png_gamma", colorSpace?.gamma as Any), ("declares_srgb", colorSpace?.isDeclaredSRGB ?? false)]
    }

    /// Encodes ordered key/value pairs as a compact JSON object (keys keep their order, unlike JSONSerialization).
    static func encode(_ fields: [(String, Any)]) -> String {
        func value(_ v: Any) -> String {
            switch v {
            case let s as String: return quote(s)
            case let b as Bool: return b ? "true" : "false"
            case let i as Int: return String(i)
            case let d as Double: return d.isFinite ? String(d) : "null"
            case let a as [Double]: return "[" + a.map(value).joined(separator: ",") + "]"
            case let a as [Any]: return "[" + a.map(value).joined(separator: ",") + "]"
            case Optional<Any>.none: return "null"
            case let o as Optional<Any>:
                if case .some(let inner) = o { return value(inner) }
                return "null"
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
