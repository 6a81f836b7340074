import Foundation

extension PixelBuffer {
    /// This image with `body` applied to every pixel's straight (not premultiplied) red, green and blue; alpha is
    /// kept. The result is in this buffer's pixel format.
    func mappingColor(_ body: (inout Int, inout Int, inout Int) -> Void) -> PixelBuffer {
        var out = converted(to: .rgba8)
        let (w, h, stride) = (width, height, out.bytesPerRow)
        out.withUnsafeMutableBytes { bytes in
            for y in 0..<h {
                var o = y * stride
                for _ in 0..<w {
                    var (r, g, b) = (Int(bytes[o]), Int(bytes[o + 1]), Int(bytes[o + 2]))
                    body(&r, &g, &b)
                    bytes[o] = UInt8(clamping: r)
                    bytes[o + 1] = UInt8(clamping: g)
                    bytes[o + 2] = UInt8(clamping: b)
                    o += 4
                }
            }
        }
        return out.converted(to: pixelFormat)
    }

    /// This image with `percent` of 255 added to each colour channel (−100 … 100 spans black to white), clamped:
    /// thumbor's `brightness(percent)` (its integer maths: the delta is `255 * percent / 100`, truncated).
    ///
    /// - Important: O(pixels); alpha kept; pure, thread-safe.
    public func adjustingBrightness(percent: Int) -> PixelBuffer {
        let delta = 255 * max(-1000, min(1000, percent)) / 100
        return mappingColor { r, g, b in r += delta; g += delta; b += delta }
    }

    /// This image with each colour channel's distance from 128 scaled by `((percent + 100)² / 100) / 100`,
    /// clamped: thumbor's `contrast(percent)` (−100 flattens to grey, 0 keeps, 100 quadruples), its integer maths.
    ///
    /// - Important: O(pixels); alpha kept; pure, thread-safe.
    public func adjustingContrast(percent: Int) -> PixelBuffer {
        let p = max(-1000, min(1000, percent)) + 100
        let factor = p * p / 100
        return mappingColor { r, g, b in
            r = factor * (r - 128) / 100 + 128
            g = factor * (g - 128) / 100 + 128
            b = factor * (b - 128) / 100 + 128
        }
    }

    /// This image with `red`, `green` and `blue` percent of 255 added to those channels, clamped: thumbor's
    /// `rgb(r, g, b)`.
    ///
    /// - Important: O(pixels); alpha kept; pure, thread-safe.
    public func addingRGB(red: Int, green: Int, blue: Int) -> PixelBuffer {
        let (dr, dg, db) = (255 * max(-1000, min(1000, red)) / 100, 255 * max(-1000, min(1000, green)) / 100,
                            255 * max(-1000, min(1000, blue)) / 100)
        return mappingColor { r, g, b in r += dr; g += dg; b += db }
    }

    /// This image in grey: luma by ITU-R 601 weights, rounded (PIL's `L`: `(19595 R + 38470 G + 7471 B + 2¹⁵) >> 16`),
    /// in all three channels: thumbor's `grayscale()`.
    ///
    /// - Important: O(pixels); alpha kept; pure, thread-safe.
    public func grayscaled() -> PixelBuffer {
        mappingColor { r, g, b in
            let luma = (19595 * r + 38470 * g + 7471 * b + 0x8000) >> 16
            (r, g, b) = (luma, luma, luma)
        }
    }

    /// The mean straight colour of every pixel, alpha 255 (thumbor's `fill(auto)`, which it calls the median):
    /// each channel's sum over the pixels divided by their count, truncated.
    ///
    /// - Important: O(pixels); pure, thread-safe.
    public func meanColor() -> RGBA {
        let straight = converted(to: .rgba8)
        var (r, g, b) = (0, 0, 0)
        straight.withUnsafeBytes { bytes in
            for y in 0..<height {
                var o = y * straight.bytesPerRow
                for _ in 0..<width {
                    r += Int(bytes[o]); g += Int(bytes[o + 1]); b += Int(bytes[o + 2])
                    o += 4
                }
            }
        }
        let n = max(1, width * height)
        return RGBA(r: UInt8(r / n), g: UInt8(g / n), b: UInt8(b / n))
    }
}
