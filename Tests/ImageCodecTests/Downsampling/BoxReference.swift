import Foundation
import ImageCodec

/// A plain reference for the box-accumulator thumbnails: average a full decode over the same integer-factor
/// boxes (the largest factors keeping at least the target size), then resize exactly (Lanczos3).
enum BoxReference {
    static func thumbnail(of full: PixelBuffer, width: Int, height: Int) throws -> PixelBuffer {
        let source = full.converted(to: .rgba8Premultiplied)
        let fx = max(1, source.width / width), fy = max(1, source.height / height)
        let gw = (source.width + fx - 1) / fx, gh = (source.height + fy - 1) / fy
        var bytes = [UInt8](repeating: 0, count: gw * gh * 4)
        for cy in 0..<gh {
            for cx in 0..<gw {
                var sums = [UInt32](repeating: 0, count: 4)
                let ys = cy * fy ..< min(source.height, (cy + 1) * fy), xs = cx * fx ..< min(source.width, (cx + 1) * fx)
                for y in ys {
                    for x in xs {
                        let p = source.pixel(x: x, y: y)
                        sums[0] += UInt32(p.r); sums[1] += UInt32(p.g); sums[2] += UInt32(p.b); sums[3] += UInt32(p.a)
                    }
                }
                let area = UInt32(ys.count * xs.count)
                for c in 0..<4 { bytes[(cy * gw + cx) * 4 + c] = UInt8((sums[c] + area / 2) / area) }
            }
        }
        let grid = try PixelBuffer(width: gw, height: gh, pixelFormat: .rgba8Premultiplied, bytes: bytes)
        return try grid.resized(width: width, height: height).converted(to: full.pixelFormat)
    }
}
