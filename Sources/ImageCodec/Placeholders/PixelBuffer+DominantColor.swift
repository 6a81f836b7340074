extension PixelBuffer {
    /// The most common colour of the image: pixels are binned by the top 4 bits of each channel (4,096 bins),
    /// pixels under half opacity left out, and the mean of the fullest bin returned, straight (un-premultiplied).
    /// `nil` when no pixel is at least half opaque. Ties go to the first bin filled (in scan order).
    ///
    /// ```swift
    /// let colour = thumbnail.dominantColor    // RGBA(r: 34, g: 87, b: 140, a: 255)
    /// ```
    ///
    /// - Important: O(pixels); meant for a thumbnail (the `/info` endpoint uses one of at most 100 pixels a side).
    ///   Pure, thread-safe.
    public var dominantColor: RGBA? {
        let straight = converted(to: .rgba8)
        var counts = [Int](repeating: 0, count: 4096)
        var sums = [Int](repeating: 0, count: 4096 * 3)
        var order: [Int] = []
        straight.withUnsafeBytes { bytes in
            for y in 0..<height {
                let row = y * straight.bytesPerRow
                for x in 0..<width {
                    let o = row + x * 4
                    guard bytes[o + 3] >= 128 else { continue }
                    let (r, g, b) = (Int(bytes[o]), Int(bytes[o + 1]), Int(bytes[o + 2]))
                    let bin = (r >> 4) << 8 | (g >> 4) << 4 | b >> 4
                    if counts[bin] == 0 { order.append(bin) }
                    counts[bin] += 1
                    sums[bin * 3] += r; sums[bin * 3 + 1] += g; sums[bin * 3 + 2] += b
                }
            }
        }
        var best: Int?
        for bin in order where best == nil || counts[bin] > counts[best!] { best = bin }
        guard let bin = best else { return nil }
        let n = counts[bin]
        return RGBA(r: UInt8((sums[bin * 3] + n / 2) / n), g: UInt8((sums[bin * 3 + 1] + n / 2) / n),
                    b: UInt8((sums[bin * 3 + 2] + n / 2) / n), a: 255)
    }
}
