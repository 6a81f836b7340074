/// A small box-averaged copy of an image's colour (straight sRGB, 0…255 as `Float`), for choosing a crop window:
/// each cell is the mean of a `block × block` square of source pixels (the last row and column of cells average
/// the pixels they have). Premultiplied pixels are taken as they are: transparent parts count as black, as a
/// cut-out shows on a dark page, so the object stands out from its background.
///
/// - Important: A value type; thread-safe.
struct CropGrid {
    /// The longest side of the attention grid: libvips scores a 32 × 32 grid; 48 matched its windows best over the
    /// corpus photos (SmartCropVipsComparisonTests), and a finer grid lets texture (foliage, water) outweigh subjects.
    static let attentionSide = 48
    /// The longest side of the entropy grid.
    static let entropySide = 128

    let width: Int
    let height: Int
    /// Source pixels per cell on each axis (the last cell may hold fewer).
    let scaleX: Double
    let scaleY: Double
    var red: [Float]
    var green: [Float]
    var blue: [Float]

    init(_ buffer: PixelBuffer, maxSide: Int) {
        let longest = max(buffer.width, buffer.height)
        let block = max(1, (longest + maxSide - 1) / maxSide)
        let (w, h) = ((buffer.width + block - 1) / block, (buffer.height + block - 1) / block)
        width = w
        height = h
        scaleX = Double(buffer.width) / Double(w)
        scaleY = Double(buffer.height) / Double(h)
        var sums = [UInt32](repeating: 0, count: w * h * 3)
        var counts = [UInt32](repeating: 0, count: w * h)
        buffer.withUnsafeBytes { bytes in
            sums.withUnsafeMutableBufferPointer { sums in
                counts.withUnsafeMutableBufferPointer { counts in
                    for y in 0..<buffer.height {
                        let row = y * buffer.bytesPerRow
                        let cellRow = (y / block) * w
                        var x = 0
                        while x < buffer.width {
                            let end = min(x + block, buffer.width)
                            let cell = cellRow + x / block
                            var (r, g, b) = (UInt32(0), UInt32(0), UInt32(0))
                            for p in x..<end {
                                let o = row + p * 4
                                r &+= UInt32(bytes[o]); g &+= UInt32(bytes[o + 1]); b &+= UInt32(bytes[o + 2])
                            }
                            sums[cell * 3] &+= r; sums[cell * 3 + 1] &+= g; sums[cell * 3 + 2] &+= b
                            counts[cell] &+= UInt32(end - x)
                            x = end
                        }
                    }
                }
            }
        }
        red = [Float](repeating: 0, count: w * h)
        green = red
        blue = red
        for i in 0..<(w * h) {
            let n = Float(max(counts[i], 1))
            red[i] = Float(sums[i * 3]) / n
            green[i] = Float(sums[i * 3 + 1]) / n
            blue[i] = Float(sums[i * 3 + 2]) / n
        }
    }
}
