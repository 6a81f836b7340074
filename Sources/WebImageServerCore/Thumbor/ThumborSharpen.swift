import Foundation
import ImageCodec

/// thumbor's `sharpen(amount, radius, luminance_only)`: its wavelet sharpen (thumbor/ext/filters/lib/
/// wavelet_sharpen.c, after Marco Rossini's GIMP plug-in), ported step for step in single precision so that the same
/// pixels come out: five levels of an à-trous "hat" decomposition, each level's detail multiplied by
/// `amount · e^(−(level − radius)² / 1.5) + 1`; on R, G and B, or with `luminance_only` on the luma of thumbor's
/// YCbCr alone. Alpha is kept. Results are truncated to 0…255, as thumbor's float-to-byte store truncates.
///
/// Where a side is shorter than 33 pixels thumbor's edge mirroring reads outside its rows (undefined in C); here
/// the mirror is carried on, which is what it does for every longer side.
///
/// - Important: Holds three single-precision planes (12 bytes a pixel) besides a straight copy of the image (the
///   render reserves seven frames of the box for a filter: RenderCost). Pure; thread-safe.
enum ThumborSharpen {
    static func apply(to image: PixelBuffer, amount: Double, radius: Double, luminanceOnly: Bool) throws -> PixelBuffer {
        var out = image.converted(to: .rgba8)
        let (width, height) = (out.width, out.height)
        let size = width * height
        let stride = out.bytesPerRow
        var planes = [[Float]](repeating: [Float](repeating: 0, count: size), count: 3)
        var temp = [Float](repeating: 0, count: max(width, height))
        out.withUnsafeMutableBytes { bytes in
            for channel in 0..<3 where !luminanceOnly || channel == 0 {
                planes[0].withUnsafeMutableBufferPointer { plane in
                    for y in 0..<height {
                        for x in 0..<width {
                            let o = y * stride + x * 4
                            let value = luminanceOnly ? luma(bytes[o], bytes[o + 1], bytes[o + 2]) : Float(bytes[o + channel])
                            plane[y * width + x] = value / 255
                        }
                    }
                }
                sharpen(&planes, temp: &temp, width: width, height: height, amount: amount, radius: radius)
                // Back to 0…255 into this channel's bytes (luminance: the three, from the luma and the unchanged
                // chroma, as thumbor's ycbcr2rgb).
                planes[0].withUnsafeBufferPointer { plane in
                    for y in 0..<height {
                        for x in 0..<width {
                            let o = y * stride + x * 4
                            let v = plane[y * width + x] * 255
                            if luminanceOnly {
                                let (r, g, b) = (Float(bytes[o]), Float(bytes[o + 1]), Float(bytes[o + 2]))
                                let cb = ((-0.1687 as Float) * r - 0.3313 * g + 0.5000 * b + 128) / 255 * 255
                                let cr = ((0.5000 as Float) * r - 0.4187 * g - 0.0813 * b + 128) / 255 * 255
                                bytes[o] = store(v + 1.40200 * (cr - 128))
                                bytes[o + 1] = store(v - 0.34414 * (cb - 128) - 0.71414 * (cr - 128))
                                bytes[o + 2] = store(v + 1.77200 * (cb - 128))
                            } else {
                                bytes[o + channel] = store(v)
                            }
                        }
                    }
                }
            }
        }
        return out.converted(to: image.pixelFormat)
    }

    /// thumbor's `rgb2ycbcr` luma.
    @inline(__always) private static func luma(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Float {
        (0.2990 as Float) * Float(r) + 0.5870 * Float(g) + 0.1140 * Float(b)
    }

    /// `ADJUST_COLOR` then C's float-to-unsigned-char conversion (truncation).
    @inline(__always) private static func store(_ value: Float) -> UInt8 {
        value > 255 ? 255 : value < 0 ? 0 : UInt8(value)
    }

    /// `wavelet_sharpen` on `planes[0]`, with `planes[1]` and `planes[2]` as its low-pass buffers.
    private static func sharpen(_ planes: inout [[Float]], temp: inout [Float], width: Int, height: Int,
                                amount: Double, radius: Double) {
        let size = width * height
        var p0 = planes[0], p1 = planes[1], p2 = planes[2]
        planes = []  // the three planes stay unique while they are worked on
        defer { planes = [p0, p1, p2] }
        p0.withUnsafeMutableBufferPointer { b0 in
            p1.withUnsafeMutableBufferPointer { b1 in
                p2.withUnsafeMutableBufferPointer { b2 in
                    temp.withUnsafeMutableBufferPointer { t in
                        let all = [b0, b1, b2]
                        var hpass = 0, lpass = 0
                        for level in 0..<5 {
                            lpass = (level & 1) + 1
                            let (high, low) = (all[hpass], all[lpass])
                            let scale = 1 << level
                            // Rows of the high-pass plane into the low-pass one, then its columns in place.
                            for row in 0..<height {
                                hat(t, high, start: row * width, step: 1, count: width, scale: scale)
                                for col in 0..<width { low[row * width + col] = t[col] * 0.25 }
                            }
                            for col in 0..<width {
                                hat(t, low, start: col, step: width, count: height, scale: scale)
                                for row in 0..<height { low[row * width + col] = t[row] * 0.25 }
                            }
                            let amt = Float(amount * exp(-(Double(level) - radius) * (Double(level) - radius) / 1.5) + 1)
                            for i in 0..<size {
                                high[i] -= low[i]
                                high[i] *= amt
                                if hpass != 0 { b0[i] += high[i] }
                            }
                            hpass = lpass
                        }
                        let low = all[lpass]
                        for i in 0..<size { b0[i] += low[i] }
                    }
                }
            }
        }
    }

    /// `hat_transform`: `2·b[i] + b[i − scale] + b[i + scale]`, mirrored at both ends.
    private static func hat(_ temp: UnsafeMutableBufferPointer<Float>, _ base: UnsafeMutableBufferPointer<Float>,
                            start: Int, step: Int, count: Int, scale: Int) {
        @inline(__always) func mirror(_ index: Int) -> Int {
            if index >= 0 && index < count { return index }
            guard count > 1 else { return 0 }
            let period = 2 * (count - 1)
            let folded = ((index % period) + period) % period
            return folded < count ? folded : period - folded
        }
        for i in 0..<count {
            temp[i] = 2 * base[start + step * i] + base[start + step * mirror(i - scale)] + base[start + step * mirror(i + scale)]
        }
    }
}
