import Foundation
import ImageCodec

/// Analytic references for CICP sources (primaries + transfer), independent of Little CMS: per pixel, the
/// transfer function to linear light, the 3×3 matrix from the source primaries to sRGB's (both D65, so the
/// relative colorimetric intent adapts nothing), clipping, and the sRGB curve.
public enum ColorReference {
    /// RGB → XYZ for primaries and a white point given as xy.
    public static func rgbToXYZ(red: (Double, Double), green: (Double, Double), blue: (Double, Double),
                                white: (Double, Double)) -> [[Double]] {
        func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
        let r = xyz(red), g = xyz(green), b = xyz(blue), w = xyz(white)
        let m = [[r[0], g[0], b[0]], [r[1], g[1], b[1]], [r[2], g[2], b[2]]]
        let s = multiply(invert(m), w)
        return (0..<3).map { row in (0..<3).map { col in m[row][col] * s[col] } }
    }

    /// sRGB / BT.709 primaries, D65.
    public static let srgbToXYZ = rgbToXYZ(red: (0.64, 0.33), green: (0.30, 0.60), blue: (0.15, 0.06), white: (0.3127, 0.3290))
    /// BT.2020 primaries, D65.
    public static let bt2020ToXYZ = rgbToXYZ(red: (0.708, 0.292), green: (0.170, 0.797), blue: (0.131, 0.046),
                                             white: (0.3127, 0.3290))

    /// The sRGB rendering of `buffer` (straight RGBA8 code values) whose channels decode to linear light with
    /// `toLinear` in the primaries of `sourceToXYZ`.
    public static func render(_ buffer: PixelBuffer, sourceToXYZ: [[Double]], toLinear: (Double) -> Double) throws -> PixelBuffer {
        let m = multiply(invert(srgbToXYZ), sourceToXYZ)
        let table = (0...255).map { toLinear(Double($0) / 255) }
        var out = try PixelBuffer(width: buffer.width, height: buffer.height, pixelFormat: .rgba8)
        let straight = buffer.converted(to: .rgba8)
        for y in 0..<buffer.height {
            for x in 0..<buffer.width {
                let p = straight.pixel(x: x, y: y)
                let v = [table[Int(p.r)], table[Int(p.g)], table[Int(p.b)]]
                let s = multiply(m, v).map { encode(min(max($0, 0), 1)) }
                out.setPixel(x: x, y: y, to: RGBA(r: s[0], g: s[1], b: s[2], a: p.a))
            }
        }
        return out
    }

    /// The sRGB curve, linear → 8-bit code.
    public static func encode(_ linear: Double) -> UInt8 {
        let e = linear <= 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
        return UInt8((min(max(e, 0), 1) * 255).rounded())
    }

    static func multiply(_ m: [[Double]], _ v: [Double]) -> [Double] {
        (0..<3).map { r in m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2] }
    }

    static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { r in (0..<3).map { c in (0..<3).reduce(0) { $0 + a[r][$1] * b[$1][c] } } }
    }

    static func invert(_ m: [[Double]]) -> [[Double]] {
        let (a, b, c) = (m[0][0], m[0][1], m[0][2])
        let (d, e, f) = (m[1][0], m[1][1], m[1][2])
        let (g, h, i) = (m[2][0], m[2][1], m[2][2])
        let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
                [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
                [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]
    }
}
