import Foundation

extension PixelBuffer {
    /// This image with its four corners cut to an ellipse of radii `a` (horizontal) × `b` (vertical), the
    /// outside painted `color`, or made transparent when `transparent` (thumbor's `round_corner`): in a corner
    /// row at `dy` rows from the ellipse's centre, the first `⌊a − a·√(1 − (dy/b)²)⌋` columns, as thumbor's
    /// filter counts them (one fewer on the right, where its loop starts one column in), with the next column
    /// blended a quarter toward the paint.
    ///
    /// - Parameters: `a` and `b` are clamped to half the width and height; 0 leaves the image as it is.
    /// - Important: O(corner pixels) besides a copy; the result is in this buffer's pixel format; pure, thread-safe.
    public func roundingCorners(a: Int, b: Int, color: RGBA, transparent: Bool) -> PixelBuffer {
        let ra = min(max(a, 0), width / 2), rb = min(max(b, 0), height / 2)
        guard ra > 0, rb > 0 else { return self }
        var out = converted(to: .rgba8)
        let stride = out.bytesPerRow
        let paint = transparent ? RGBA(r: color.r, g: color.g, b: color.b, a: 0) : RGBA(r: color.r, g: color.g, b: color.b, a: 255)
        let (w, h) = (width, height)
        out.withUnsafeMutableBytes { d in
            func set(_ column: Int, _ row: Int, _ amount: Double) {
                guard column >= 0, column < w, row >= 0, row < h else { return }
                let o = row * stride + column * 4
                let keep = 1 - amount
                d[o] = UInt8((Double(d[o]) * keep + Double(paint.r) * amount).rounded())
                d[o + 1] = UInt8((Double(d[o + 1]) * keep + Double(paint.g) * amount).rounded())
                d[o + 2] = UInt8((Double(d[o + 2]) * keep + Double(paint.b) * amount).rounded())
                d[o + 3] = UInt8((Double(d[o + 3]) * keep + Double(paint.a) * amount).rounded())
            }
            for dy in 0...rb {
                let fraction = Double(dy) / Double(rb)
                let end = Int(Double(ra) - Double(ra) * (1 - fraction * fraction).squareRoot())
                let (top, bottom) = (rb - dy, h - rb + dy - 1)
                for column in 0..<end {
                    set(column, top, 1); set(column, bottom, 1)
                    if column > 0 { set(w - column, top, 1); set(w - column, bottom, 1) }
                }
                set(end, top, 0.25); set(end, bottom, 0.25)
                if end > 0 { set(w - end, top, 0.25); set(w - end, bottom, 0.25) }
            }
        }
        return out.converted(to: pixelFormat)
    }
}
