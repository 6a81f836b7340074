import Foundation

/// Reduces straight RGBA pixels to an indexed image of at most 256 colours for GIF.
///
/// - Pixels with alpha < 128 become the transparent index (the palette's last entry); the others are opaque.
/// - An image with few enough distinct opaque colours gets them exactly (a lossless round trip).
/// - Otherwise median cut (Heckbert) over a 15-bit colour histogram picks the palette: the box with the most
///   pixels × widest side is split at the weighted median of its longest axis; each palette entry is the
///   mean of the exact colours in its box. Pixels are mapped to the nearest entry (memoised per 18-bit
///   colour), optionally with Floyd–Steinberg error diffusion.
///
/// - Important: Stateless and thread-safe.
enum ColorQuantizer {
    /// An indexed image.
    struct Indexed {
        /// RGB triples, `palette.count / 3` entries (at most 256).
        var palette: [UInt8]
        /// One index per pixel, rows packed.
        var indices: [UInt8]
        /// The index used for transparent pixels, `nil` when every pixel is opaque.
        var transparentIndex: Int?
        var colorCount: Int { palette.count / 3 }
    }

    /// Quantises `buffer` (converted to straight alpha first).
    static func quantize(_ buffer: PixelBuffer, dithering: Bool) -> Indexed {
        let straight = buffer.converted(to: .rgba8)
        let (width, height) = (straight.width, straight.height)
        var pixels = [UInt32](repeating: 0, count: width * height)
        straight.withUnsafeBytes { raw in
            pixels.withUnsafeMutableBytes { out in
                for y in 0..<height {
                    (out.baseAddress! + y * width * 4).copyMemory(from: raw.baseAddress! + y * straight.bytesPerRow, byteCount: width * 4)
                }
            }
        }
        var hasTransparency = false
        var exact: [UInt32: UInt8] = [:]
        var exactPossible = true
        for p in pixels {
            if p >> 24 < 128 { hasTransparency = true; continue }
            guard exactPossible else { continue }
            let rgb = p & 0x00FF_FFFF
            if exact[rgb] == nil {
                if exact.count == 256 { exactPossible = false; continue }
                exact[rgb] = UInt8(exact.count)
            }
        }
        let limit = hasTransparency ? 255 : 256
        if exactPossible && exact.count <= limit {
            return exactIndexed(pixels, colors: exact, hasTransparency: hasTransparency)
        }
        let palette = medianCut(pixels, maxColors: limit)
        var indices = [UInt8](repeating: 0, count: pixels.count)
        let transparent = hasTransparency ? palette.count / 3 : nil
        var mapper = Mapper(palette: palette)
        mapper.map(pixels, width: width, height: height, into: &indices,
                   transparentIndex: transparent.map { UInt8($0) }, dithering: dithering)
        var full = palette
        if hasTransparency { full.append(contentsOf: [0, 0, 0]) }
        return Indexed(palette: full, indices: indices, transparentIndex: transparent)
    }

    private static func exactIndexed(_ pixels: [UInt32], colors: [UInt32: UInt8], hasTransparency: Bool) -> Indexed {
        var palette = [UInt8](repeating: 0, count: colors.count * 3)
        for (rgb, index) in colors {
            let i = Int(index) * 3
            palette[i] = UInt8(rgb & 0xFF); palette[i + 1] = UInt8((rgb >> 8) & 0xFF); palette[i + 2] = UInt8((rgb >> 16) & 0xFF)
        }
        let transparent = colors.count
        if hasTransparency { palette.append(contentsOf: [0, 0, 0]) }
        let indices = pixels.map { p -> UInt8 in
            p >> 24 < 128 ? UInt8(transparent) : colors[p & 0x00FF_FFFF] ?? 0
        }
        return Indexed(palette: palette, indices: indices, transparentIndex: hasTransparency ? transparent : nil)
    }

    /// One histogram cell: pixel count and channel sums of the exact colours that fell in it.
    private struct Cell {
        var key: Int
        var count: Int
        var sum: (Int, Int, Int)
        func channel(_ c: Int) -> Int { (key >> (10 - 5 * c)) & 31 }
    }

    /// Median cut to at most `maxColors` RGB entries.
    static func medianCut(_ pixels: [UInt32], maxColors: Int) -> [UInt8] {
        var counts = [Int](repeating: 0, count: 32768)
        var sums = [Int](repeating: 0, count: 32768 * 3)
        for p in pixels where p >> 24 >= 128 {
            let r = Int(p & 0xFF), g = Int((p >> 8) & 0xFF), b = Int((p >> 16) & 0xFF)
            let key = (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)
            counts[key] += 1
            sums[key * 3] += r; sums[key * 3 + 1] += g; sums[key * 3 + 2] += b
        }
        var cells: [Cell] = []
        for key in 0..<32768 where counts[key] > 0 {
            cells.append(Cell(key: key, count: counts[key], sum: (sums[key * 3], sums[key * 3 + 1], sums[key * 3 + 2])))
        }
        guard !cells.isEmpty else { return [0, 0, 0] }
        // Boxes are ranges of `cells`, re-sorted along their split axis when split.
        var boxes: [Range<Int>] = [0..<cells.count]
        func extent(_ box: Range<Int>) -> (axis: Int, width: Int, pixels: Int) {
            var lo = [31, 31, 31], hi = [0, 0, 0], n = 0
            for cell in cells[box] {
                n += cell.count
                for c in 0..<3 { let v = cell.channel(c); lo[c] = min(lo[c], v); hi[c] = max(hi[c], v) }
            }
            let widths = (0..<3).map { hi[$0] - lo[$0] }
            let axis = widths.firstIndex(of: widths.max()!)!
            return (axis, widths[axis], n)
        }
        // Each box's extent is measured once, when the box is made.
        var extents = [extent(boxes[0])]
        while boxes.count < maxColors {
            var best = -1, bestScore = 0, bestAxis = 0
            for (i, e) in extents.enumerated() where boxes[i].count > 1 && e.width > 0 {
                let score = e.pixels * (e.width + 1)
                if score > bestScore { best = i; bestScore = score; bestAxis = e.axis }
            }
            guard best >= 0 else { break }
            let box = boxes[best]
            cells[box].sort { $0.channel(bestAxis) < $1.channel(bestAxis) }
            let total = cells[box].reduce(0) { $0 + $1.count }
            var running = 0, split = box.lowerBound + 1
            for i in box {
                running += cells[i].count
                if running * 2 >= total { split = min(max(i + 1, box.lowerBound + 1), box.upperBound - 1); break }
            }
            boxes[best] = box.lowerBound..<split
            boxes.append(split..<box.upperBound)
            extents[best] = extent(boxes[best])
            extents.append(extent(boxes[boxes.count - 1]))
        }
        var palette: [UInt8] = []
        for box in boxes {
            var n = 0, r = 0, g = 0, b = 0
            for cell in cells[box] { n += cell.count; r += cell.sum.0; g += cell.sum.1; b += cell.sum.2 }
            palette.append(contentsOf: [UInt8((r + n / 2) / n), UInt8((g + n / 2) / n), UInt8((b + n / 2) / n)])
        }
        return palette
    }
}
