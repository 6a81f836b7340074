import Foundation
import ImageCodec

/// Paints the demo's synthetic pictures: a diagonal gradient, a few discs and bars, and grain, so encoded
/// sizes are like real photos and graphics rather than flat colour.
///
/// - Important: Stateless; thread-safe.
enum DemoPainter {
    /// A `width`×`height` straight-alpha RGBA picture for `seed`; `phase` (0…1) moves the shapes, for
    /// animation frames; `alpha` fades the corners to transparent; `grain` is the noise amplitude (0…255).
    static func paint(width: Int, height: Int, seed: UInt64, phase: Double = 0, alpha: Bool = false,
                      grain: Int = 14) throws -> PixelBuffer {
        var random = DemoRandom(seed: seed)
        let hue = Double(random.next() % 360)
        let top = rgb(hue: hue, saturation: 0.65, value: 0.95)
        let bottom = rgb(hue: hue + 140, saturation: 0.75, value: 0.35)
        let shapes = (0..<6).map { _ in Shape(random: &random, width: width, height: height, phase: phase) }
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        bytes.withUnsafeMutableBufferPointer { pixels in
            // The gradient.
            let w = Double(width), h = Double(height)
            for y in 0..<height {
                for x in 0..<width {
                    let t = (Double(x) / w + Double(y) / h) / 2
                    let offset = (y * width + x) * 4
                    pixels[offset] = clamp(top.0 + (bottom.0 - top.0) * t)
                    pixels[offset + 1] = clamp(top.1 + (bottom.1 - top.1) * t)
                    pixels[offset + 2] = clamp(top.2 + (bottom.2 - top.2) * t)
                }
            }
            // The shapes, 65 % over what is below, each over its own bounding box only.
            for shape in shapes {
                let color = (Int(shape.color.0), Int(shape.color.1), Int(shape.color.2))
                let (x0, x1) = (max(0, shape.minX), min(width, shape.maxX))
                let (y0, y1) = (max(0, shape.minY), min(height, shape.maxY))
                guard x0 < x1, y0 < y1 else { continue } // off the picture
                for y in y0..<y1 {
                    for x in x0..<x1 where shape.contains(x: x, y: y) {
                        let offset = (y * width + x) * 4
                        pixels[offset] = UInt8((Int(pixels[offset]) * 35 + color.0 * 65) / 100)
                        pixels[offset + 1] = UInt8((Int(pixels[offset + 1]) * 35 + color.1 * 65) / 100)
                        pixels[offset + 2] = UInt8((Int(pixels[offset + 2]) * 35 + color.2 * 65) / 100)
                    }
                }
            }
            // Grain, and the alpha fade.
            let radius2 = (w * w + h * h) / 4
            for y in 0..<height {
                for x in 0..<width {
                    let offset = (y * width + x) * 4
                    if grain > 0 {
                        let noise = Int(random.next() % UInt64(2 * grain + 1)) - grain
                        for channel in 0..<3 {
                            pixels[offset + channel] = UInt8(max(0, min(255, Int(pixels[offset + channel]) + noise)))
                        }
                    }
                    if alpha {
                        let dx = Double(x) - w / 2, dy = Double(y) - h / 2
                        pixels[offset + 3] = clamp(255 * (1.6 - 1.4 * (dx * dx + dy * dy) / radius2))
                    }
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

    /// A disc or a bar, placed on its orbit for the animation phase.
    private struct Shape {
        var isDisc: Bool
        var centerX, centerY, halfWidth, halfHeight: Int
        var color: (Double, Double, Double)

        init(random: inout DemoRandom, width: Int, height: Int, phase: Double) {
            let w = Double(width), h = Double(height)
            isDisc = random.next() % 3 != 0
            let cx = Double(random.next() % 1000) / 1000 * w
            let cy = Double(random.next() % 1000) / 1000 * h
            let size = (0.08 + Double(random.next() % 1000) / 1000 * 0.18) * min(w, h)
            let orbit = 0.15 * min(w, h)
            color = DemoPainter.rgb(hue: Double(random.next() % 360), saturation: 0.8, value: 0.9)
            let angle = phase * 2 * Double.pi
            centerX = Int(cx + orbit * cos(angle))
            centerY = Int(cy + orbit * sin(angle))
            halfWidth = Int(isDisc ? size : size * 1.4)
            halfHeight = Int(isDisc ? size : size * 0.35)
        }

        var minX: Int { centerX - halfWidth }
        var maxX: Int { centerX + halfWidth + 1 }
        var minY: Int { centerY - halfHeight }
        var maxY: Int { centerY + halfHeight + 1 }

        func contains(x: Int, y: Int) -> Bool {
            guard isDisc else { return true } // a bar fills its box
            let dx = x - centerX, dy = y - centerY
            return dx * dx + dy * dy <= halfWidth * halfWidth
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
