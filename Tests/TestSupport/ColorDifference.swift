import Foundation
import ImageCodec

/// CIEDE2000 differences between two sRGB images, for the colour tests of every codec module.
public enum ColorDifference {
    /// Mean, 95th percentile and maximum ΔE00 over the pixels of two images of one size.
    public struct Stats: CustomStringConvertible, Sendable {
        public var mean: Double
        public var p95: Double
        public var max: Double
        public var description: String { String(format: "ΔE00 mean %.3f p95 %.3f max %.3f", mean, p95, max) }
    }

    /// ΔE00 over every pixel (pixels transparent in both are skipped); `nil` when the sizes differ.
    public static func stats(_ a: PixelBuffer, _ b: PixelBuffer) -> Stats? {
        guard a.width == b.width, a.height == b.height else { return nil }
        let pa = a.converted(to: .rgba8).packedBytes
        let pb = b.converted(to: .rgba8).packedBytes
        var values: [Double] = []
        values.reserveCapacity(a.width * a.height)
        var i = 0
        while i < pa.count {
            if !(pa[i + 3] == 0 && pb[i + 3] == 0) {
                values.append(CIEDE2000.difference(lab(pa[i], pa[i + 1], pa[i + 2]), lab(pb[i], pb[i + 1], pb[i + 2])))
            }
            i += 4
        }
        guard !values.isEmpty else { return Stats(mean: 0, p95: 0, max: 0) }
        values.sort()
        let mean = values.reduce(0, +) / Double(values.count)
        let p95 = values[min(values.count - 1, Int(Double(values.count) * 0.95))]
        return Stats(mean: mean, p95: p95, max: values.last!)
    }

    /// CIE L*a*b* (D65 white) of an sRGB pixel.
    public static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (Double, Double, Double) {
        func lin(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (rl, gl, bl) = (lin(r), lin(g), lin(b))
        let x = (0.4124564 * rl + 0.3575761 * gl + 0.1804375 * bl) / 0.95047
        let y = 0.2126729 * rl + 0.7151522 * gl + 0.0721750 * bl
        let z = (0.0193339 * rl + 0.1191920 * gl + 0.9503041 * bl) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }

}

/// CIEDE2000 colour difference (Sharma, Wu, Dalal 2005), with kL = kC = kH = 1.
public enum CIEDE2000 {
    public static func difference(_ lab1: (Double, Double, Double), _ lab2: (Double, Double, Double)) -> Double {
        let (l1, a1, b1) = lab1
        let (l2, a2, b2) = lab2
        let c1 = (a1 * a1 + b1 * b1).squareRoot(), c2 = (a2 * a2 + b2 * b2).squareRoot()
        let cBar = (c1 + c2) / 2
        let c7 = pow(cBar, 7)
        let g = 0.5 * (1 - (c7 / (c7 + pow(25, 7))).squareRoot())
        let a1p = (1 + g) * a1, a2p = (1 + g) * a2
        let c1p = (a1p * a1p + b1 * b1).squareRoot(), c2p = (a2p * a2p + b2 * b2).squareRoot()
        func hue(_ b: Double, _ a: Double) -> Double {
            if a == 0 && b == 0 { return 0 }
            let h = atan2(b, a) * 180 / .pi
            return h < 0 ? h + 360 : h
        }
        let h1p = hue(b1, a1p), h2p = hue(b2, a2p)
        let dLp = l2 - l1
        let dCp = c2p - c1p
        var dhp = 0.0
        if c1p * c2p != 0 {
            dhp = h2p - h1p
            if dhp > 180 { dhp -= 360 } else if dhp < -180 { dhp += 360 }
        }
        let dHp = 2 * (c1p * c2p).squareRoot() * sin(dhp * .pi / 360)
        let lBarp = (l1 + l2) / 2
        let cBarp = (c1p + c2p) / 2
        var hBarp = h1p + h2p
        if c1p * c2p != 0 {
            if abs(h1p - h2p) <= 180 { hBarp = (h1p + h2p) / 2 } else if h1p + h2p < 360 { hBarp = (h1p + h2p + 360) / 2 } else {
                hBarp = (h1p + h2p - 360) / 2
            }
        }
        let rad = Double.pi / 180
        let t = 1 - 0.17 * cos((hBarp - 30) * rad) + 0.24 * cos(2 * hBarp * rad) + 0.32 * cos((3 * hBarp + 6) * rad)
            - 0.20 * cos((4 * hBarp - 63) * rad)
        let dTheta = 30 * exp(-pow((hBarp - 275) / 25, 2))
        let cBarp7 = pow(cBarp, 7)
        let rc = 2 * (cBarp7 / (cBarp7 + pow(25, 7))).squareRoot()
        let lm = (lBarp - 50) * (lBarp - 50)
        let sl = 1 + 0.015 * lm / (20 + lm).squareRoot()
        let sc = 1 + 0.045 * cBarp
        let sh = 1 + 0.015 * cBarp * t
        let rt = -sin(2 * dTheta * rad) * rc
        let x = dLp / sl, y = dCp / sc, z = dHp / sh
        return (x * x + y * y + z * z + rt * y * z).squareRoot()
    }
}
