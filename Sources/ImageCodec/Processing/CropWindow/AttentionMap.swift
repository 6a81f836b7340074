import Foundation

/// libvips' `attention` score over a `CropGrid`: per cell, the magnitude of the luma Laplacian (edges), plus
/// closeness to a skin tone and CIELAB chroma (saturation), the last two only where the cell is not dark
/// (Y > 5 of 100). Written from libvips' description of its strategy (itself from smartcrop.js), not its code.
///
/// - Important: A value type; thread-safe.
struct AttentionMap {
    let width: Int
    let height: Int
    private(set) var scores: [Double]

    /// The weight of the Laplacian's magnitude against the colour terms (libvips uses 5 on its 32-cell grid; 10
    /// on our 48-cell grid, where neighbouring cells differ less, matched its choices best).
    static let edgeWeight = 10.0
    /// The skin tone's direction in XYZ (smartcrop.js's skin colour, as libvips uses it).
    static let skin = (x: 0.78, y: 0.57, z: 0.44)

    init(_ grid: CropGrid) {
        width = grid.width
        height = grid.height
        let count = width * height
        var luma = [Double](repeating: 0, count: count)
        var colour = [Double](repeating: 0, count: count)
        let linear = Self.linearTable
        for i in 0..<count {
            let r = linear[Int(grid.red[i].rounded())], g = linear[Int(grid.green[i].rounded())]
            let b = linear[Int(grid.blue[i].rounded())]
            // Linear sRGB → XYZ (D65), Y in 0…100 as libvips has it.
            let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) * 100
            let y = (0.2126 * r + 0.7152 * g + 0.0722 * b) * 100
            let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) * 100
            luma[i] = y
            guard y > 5 else { continue }
            let magnitude = (x * x + y * y + z * z).squareRoot()
            let (dx, dy, dz) = (x / magnitude - Self.skin.x, y / magnitude - Self.skin.y, z / magnitude - Self.skin.z)
            let skin = 100 - 100 * (dx * dx + dy * dy + dz * dz).squareRoot()
            colour[i] = skin + Self.chroma(x: x, y: y, z: z)
        }
        scores = colour
        for row in 0..<height {
            for column in 0..<width {
                let i = row * width + column
                // The 4-neighbour Laplacian, edges replicated.
                let up = luma[max(row - 1, 0) * width + column], down = luma[min(row + 1, height - 1) * width + column]
                let left = luma[row * width + max(column - 1, 0)], right = luma[row * width + min(column + 1, width - 1)]
                scores[i] += Self.edgeWeight * abs(4 * luma[i] - up - down - left - right)
            }
        }
    }

    /// CIELAB chroma (√(a² + b²)) of an XYZ colour (D65 white, Y of 100).
    static func chroma(x: Double, y: Double, z: Double) -> Double {
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : t * (24389.0 / 27 / 116) + 16.0 / 116 }
        let (fx, fy, fz) = (f(x / 95.047), f(y / 100), f(z / 108.883))
        let (a, b) = (500 * (fx - fy), 200 * (fy - fz))
        return (a * a + b * b).squareRoot()
    }

    /// sRGB byte → linear light.
    static let linearTable: [Double] = (0..<256).map { v in
        let c = Double(v) / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }

    /// The centre, in grid cells, of the `windowWidth × windowHeight` window (rounded to whole cells, at least
    /// one, at most the grid) with the highest score: a summed-area table gives each window's sum in O(1), every
    /// position is tried, and ties go to the position nearest the grid's centre.
    func bestWindowCentre(windowWidth: Double, windowHeight: Double) -> (x: Double, y: Double) {
        let table = SummedAreaTable(width: width, height: height, values: scores)
        let ww = min(max(Int(windowWidth.rounded()), 1), width), wh = min(max(Int(windowHeight.rounded()), 1), height)
        var best = (score: -Double.infinity, x: 0, y: 0, distance: Double.infinity)
        let (midX, midY) = (Double(width - ww) / 2, Double(height - wh) / 2)
        for y in 0...(height - wh) {
            for x in 0...(width - ww) {
                let score = table.sum(x: x, y: y, width: ww, height: wh)
                let distance = abs(Double(x) - midX) + abs(Double(y) - midY)
                // Relative tolerance: sums of doubles in a different order differ in the last bits.
                let tolerance = 1e-9 * max(abs(score), abs(best.score), 1)
                if score > best.score + tolerance || (abs(score - best.score) <= tolerance && distance < best.distance) {
                    best = (score, x, y, distance)
                }
            }
        }
        return (Double(best.x) + Double(ww) / 2, Double(best.y) + Double(wh) / 2)
    }
}

/// Sums over rectangles of a grid in O(1) each, after one O(cells) pass.
///
/// - Important: A value type; thread-safe.
struct SummedAreaTable {
    let width: Int
    let height: Int
    /// (width + 1) × (height + 1); entry (x, y) is the sum of every cell above and left of it.
    private var table: [Double]

    init(width: Int, height: Int, values: [Double]) {
        self.width = width
        self.height = height
        table = [Double](repeating: 0, count: (width + 1) * (height + 1))
        let stride = width + 1
        for y in 0..<height {
            var rowSum = 0.0
            for x in 0..<width {
                rowSum += values[y * width + x]
                table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + rowSum
            }
        }
    }

    /// The sum over the rectangle at (`x`, `y`) of `width × height` cells (inside the grid).
    func sum(x: Int, y: Int, width w: Int, height h: Int) -> Double {
        let stride = width + 1
        return table[(y + h) * stride + x + w] - table[y * stride + x + w] - table[(y + h) * stride + x] + table[y * stride + x]
    }
}
