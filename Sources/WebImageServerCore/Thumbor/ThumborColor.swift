import ImageCodec

/// Colours as thumbor's PIL engine reads them (`fill`, `background_color`): a CSS colour name, `transparent`, or
/// hex digits without `#` (RGB, RRGGBB; RGBA, RRGGBBAA).
///
/// - Important: Stateless; thread-safe.
enum ThumborColor {
    static func parse(_ text: String) -> RGBA? {
        let lower = text.lowercased()
        if lower == "transparent" { return RGBA(r: 0, g: 0, b: 0, a: 0) }
        if let named = names[lower] {
            return RGBA(r: UInt8(named >> 16), g: UInt8((named >> 8) & 0xFF), b: UInt8(named & 0xFF))
        }
        let digits = Array(lower.utf8)
        guard [3, 4, 6, 8].contains(digits.count) else { return nil }
        var values: [UInt8] = []
        for byte in digits {
            guard let v = hex(byte) else { return nil }
            values.append(v)
        }
        if digits.count <= 4 {
            let c = values.map { $0 << 4 | $0 }
            return RGBA(r: c[0], g: c[1], b: c[2], a: c.count == 4 ? c[3] : 255)
        }
        let c = stride(from: 0, to: values.count, by: 2).map { values[$0] << 4 | values[$0 + 1] }
        return RGBA(r: c[0], g: c[1], b: c[2], a: c.count == 4 ? c[3] : 255)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// The CSS colour names PIL's `ImageColor` knows that URLs use (the CSS 2 set and the common extended ones).
    private static let names: [String: UInt32] = [
        "black": 0x000000, "silver": 0xC0C0C0, "gray": 0x808080, "grey": 0x808080, "white": 0xFFFFFF,
        "maroon": 0x800000, "red": 0xFF0000, "purple": 0x800080, "fuchsia": 0xFF00FF, "magenta": 0xFF00FF,
        "green": 0x008000, "lime": 0x00FF00, "olive": 0x808000, "yellow": 0xFFFF00, "navy": 0x000080,
        "blue": 0x0000FF, "teal": 0x008080, "aqua": 0x00FFFF, "cyan": 0x00FFFF, "orange": 0xFFA500,
        "pink": 0xFFC0CB, "brown": 0xA52A2A, "gold": 0xFFD700, "beige": 0xF5F5DC, "ivory": 0xFFFFF0,
        "lightgray": 0xD3D3D3, "lightgrey": 0xD3D3D3, "darkgray": 0xA9A9A9, "darkgrey": 0xA9A9A9,
        "whitesmoke": 0xF5F5F5, "gainsboro": 0xDCDCDC, "indigo": 0x4B0082, "violet": 0xEE82EE,
        "coral": 0xFF7F50, "salmon": 0xFA8072, "tomato": 0xFF6347, "khaki": 0xF0E68C, "crimson": 0xDC143C,
        "darkblue": 0x00008B, "darkred": 0x8B0000, "darkgreen": 0x006400, "skyblue": 0x87CEEB,
    ]
}
