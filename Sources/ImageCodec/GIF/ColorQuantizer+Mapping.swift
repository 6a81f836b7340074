import Foundation

extension ColorQuantizer {
    /// Maps colours to their nearest palette entry, memoised per 18-bit colour (6 bits per channel).
    ///
    /// - Important: Not thread-safe (the memo is mutable); one per frame.
    struct Mapper {
        let palette: [UInt8]
        private var memo: [Int16]

        init(palette: [UInt8]) {
            self.palette = palette
            self.memo = [Int16](repeating: -1, count: 1 << 18)
        }

        /// The nearest entry to (r, g, b) by squared distance, from the memo of its 18-bit cell.
        mutating func nearest(_ r: Int, _ g: Int, _ b: Int) -> Int {
            let key = (r >> 2) << 12 | (g >> 2) << 6 | (b >> 2)
            let known = memo[key]
            if known >= 0 { return Int(known) }
            var best = 0, bestDistance = Int.max
            var i = 0, entry = 0
            while i < palette.count {
                let dr = Int(palette[i]) - r, dg = Int(palette[i + 1]) - g, db = Int(palette[i + 2]) - b
                let d = dr * dr * 3 + dg * dg * 4 + db * db * 2
                if d < bestDistance { bestDistance = d; best = entry }
                i += 3; entry += 1
            }
            memo[key] = Int16(best)
            return best
        }

        /// Writes an index per pixel; transparent pixels (alpha < 128) get `transparentIndex`.
        /// With `dithering`, Floyd–Steinberg spreads each opaque pixel's error to its neighbours (7/16 right,
        /// 3/16 down-left, 5/16 down, 1/16 down-right).
        mutating func map(_ pixels: [UInt32], width: Int, height: Int, into indices: inout [UInt8],
                          transparentIndex: UInt8?, dithering: Bool) {
            var current = [Int](repeating: 0, count: (width + 2) * 3)
            var below = [Int](repeating: 0, count: (width + 2) * 3)
            for y in 0..<height {
                for x in 0..<width {
                    let p = pixels[y * width + x]
                    if p >> 24 < 128 {
                        indices[y * width + x] = transparentIndex ?? 0
                        continue
                    }
                    var r = Int(p & 0xFF), g = Int((p >> 8) & 0xFF), b = Int((p >> 16) & 0xFF)
                    let e = (x + 1) * 3
                    if dithering {
                        r = min(255, max(0, r + current[e] / 16))
                        g = min(255, max(0, g + current[e + 1] / 16))
                        b = min(255, max(0, b + current[e + 2] / 16))
                    }
                    let index = nearest(r, g, b)
                    indices[y * width + x] = UInt8(index)
                    guard dithering else { continue }
                    for (c, value) in [r, g, b].enumerated() {
                        let error = value - Int(palette[index * 3 + c])
                        current[e + 3 + c] += error * 7
                        below[e - 3 + c] += error * 3
                        below[e + c] += error * 5
                        below[e + 3 + c] += error
                    }
                }
                swap(&current, &below)
                for i in below.indices { below[i] = 0 }
            }
        }
    }
}
