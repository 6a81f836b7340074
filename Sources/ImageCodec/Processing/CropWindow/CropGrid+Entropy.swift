import Foundation

extension CropGrid {
    /// The centre, in grid cells, of the window libvips' `entropy` strategy keeps: while the window is wider
    /// (taller) than asked, compare the luma entropy of a strip at each end (at most 4 cells) and cut the one
    /// with less (the far end on a tie, so a flat image keeps its centre).
    func entropyCentre(windowWidth: Double, windowHeight: Double) -> (x: Double, y: Double) {
        let targetWidth = min(max(Int(windowWidth.rounded()), 1), width)
        let targetHeight = min(max(Int(windowHeight.rounded()), 1), height)
        var luma = [UInt8](repeating: 0, count: width * height)
        for i in 0..<luma.count {
            luma[i] = UInt8(min(max((0.299 * red[i] + 0.587 * green[i] + 0.114 * blue[i]).rounded(), 0), 255))
        }
        var (left, top, w, h) = (0, 0, width, height)
        var cutFar = (x: true, y: true)
        while w > targetWidth || h > targetHeight {
            if w > targetWidth {
                let slice = min(w - targetWidth, 4)
                let near = Self.entropy(luma, stride: width, x: left, y: top, width: slice, height: h)
                let far = Self.entropy(luma, stride: width, x: left + w - slice, y: top, width: slice, height: h)
                // Alternate which end a tie cuts, so equal strips leave the window centred.
                if near < far || (near == far && !cutFar.x) { left += slice }
                if near == far { cutFar.x.toggle() }
                w -= slice
            }
            if h > targetHeight {
                let slice = min(h - targetHeight, 4)
                let near = Self.entropy(luma, stride: width, x: left, y: top, width: w, height: slice)
                let far = Self.entropy(luma, stride: width, x: left, y: top + h - slice, width: w, height: slice)
                if near < far || (near == far && !cutFar.y) { top += slice }
                if near == far { cutFar.y.toggle() }
                h -= slice
            }
        }
        return (Double(left) + Double(w) / 2, Double(top) + Double(h) / 2)
    }

    /// Shannon entropy (bits) of the luma histogram of a rectangle.
    static func entropy(_ luma: [UInt8], stride: Int, x: Int, y: Int, width: Int, height: Int) -> Double {
        var histogram = [Int](repeating: 0, count: 256)
        for row in y..<(y + height) {
            for column in x..<(x + width) { histogram[Int(luma[row * stride + column])] += 1 }
        }
        let total = Double(width * height)
        var bits = 0.0
        for count in histogram where count > 0 {
            let p = Double(count) / total
            bits -= p * log2(p)
        }
        return bits
    }
}
