import Foundation
import ImageCodec

/// Paints the demo's synthetic pictures: a diagonal gradient, a few discs and bars, and grain, so encoded
/// sizes are like real photos and graphics rather than flat colour.
///
/// - Important: Stateless; thread-safe.
enum DemoPainter {
    /// A `width`×`height` straight-alpha RGBA picture for `seed`; `phase` (0…1) moves the shapes, for
    /// animation frames; `alpha` makes the corners transparent.
    static func paint(width: Int, height: Int, seed: UInt64, phase: Double = 0, alpha: Bool = false,
                      grain: Int = 14) throws -> PixelBuffer {
        var random = DemoRandom(seed: seed)
        let hue = Double(random.next() % 360)
        let top = rgb(hue: hue, saturation: 0.65, value: 0.95)
        let bottom = rgb(hue: hue + 140, saturation: 0.75, value: 0.35)
        let shapes = (0..<6).map { _ in Shape(random: &random, width: width, height: height) }
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        let w = Double(width), h = Double(height)
        let radius2 = (w * w + h * h) / 4
        for y in 0..<height {
            for x in 0..<width {
                let t = (Double(x) / w + Double(y) / h) / 2
                var r = top.0 + (bottom.0 - top.0) * t
                var g = top.1 + (bottom.1 - top.1) * t
                var b = top.2 + (bottom.2 - top.2) * t
                for shape in shapes where shape.contains(x: Double(x), y: Double(y), phase: phase) {
                    r = r * 0.35 + shape.color.0 * 0.65
                    g = g * 0.35 + shape.color.1 * 0.65
                    b = b * 0.35 + shape.color.2 * 0.65
                }
                let noise = grain > 0 ? Double(Int(random.next() % UInt64(2 * grain + 1)) - grain) : 0
                let offset = (y * width + x) * 4
                bytes[offset] = clamp(r + noise)
                bytes[offset + 1] = clamp(g + noise)
                bytes[offset + 2] = clamp(b + noise)
                if alpha {
                    let dx = Double(x) - w / 2, dy = Double(y) - h / 2
                    let fade = 1.6 - 1.4 * (dx * dx + dy * dy) / radius2
                    bytes[offset + 3] = clamp(255 * fade)
                } else {
                    bytes[offset + 3] = 255
                }
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    private static func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }

    /// HSV to RGB in 0…255.
    static func rgb(hue: Double, saturation s: Double, value v: Double) -> (Double, Double, Double) {
        let h = (hue.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 60
        let c = v * s, x = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1)), m = v - c
        let (r, g, b): (Double, Double, Double)
        switch Int(h) {
        case 0: (r, g, b) = (c, x, 0)
        case 1: (r, g, b) = (x, c, 0)
        case 2: (r, g, b) = (0, c, x)
        case 3: (r, g, b) = (0, x, c)
        case 4: (r, g, b) = (x, 0, c)
        default: (r, g, b) = (c, 0, x)
        }
        return ((r + m) * 255, (g + m) * 255, (b + m) * 255)
    }

    /// A disc or a bar that orbits with the animation phase.
    private struct Shape {
        var isDisc: Bool
        var cx, cy, size, orbit: Double
        var color: (Double, Double, Double)

        init(random: inout DemoRandom, width: Int, height: Int) {
            let w = Double(width), h = Double(height)
            isDisc = random.next() % 3 != 0
            cx = Double(random.next() % 1000) / 1000 * w
            cy = Double(random.next() % 1000) / 1000 * h
            size = (0.08 + Double(random.next() % 1000) / 1000 * 0.18) * min(w, h)
            orbit = 0.15 * min(w, h)
            color = DemoPainter.rgb(hue: Double(random.next() % 360), saturation: 0.8, value: 0.9)
        }

        func contains(x: Double, y: Double, phase: Double) -> Bool {
            let angle = phase * 2 * Double.pi
            let px = cx + orbit * cos(angle), py = cy + orbit * sin(angle)
            if isDisc {
                let dx = x - px, dy = y - py
                return dx * dx + dy * dy <= size * size
            }
            return abs(x - px) <= size * 1.4 && abs(y - py) <= size * 0.35
        }
    }
}

/// SplitMix64: a tiny deterministic generator for the demo's pictures.
struct DemoRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
