extension SSIMULACRA2 {
    /// One channel of floats, row-major (a prepared reference's planes).
    struct Plane: Sendable {
        let width: Int
        let height: Int
        var values: [Float]
        var count: Int { width * height }
    }

    /// The scratch planes of one scoring, sized for the full scale and reused at every smaller scale and, through
    /// `Reference`'s pool, by every later comparison against the same reference: no allocation per plane, scale
    /// or try. 10 planes (40 bytes per pixel) and one padded row.
    ///
    /// - Important: Not thread-safe: used by one scoring at a time (`Reference` hands each out under its lock).
    final class Workspace {
        /// Floats per plane (the full scale's pixel count).
        let capacity: Int
        let storage: UnsafeMutablePointer<Float>
        /// Linear R, G, B (halved in place from scale to scale).
        let linear: [UnsafeMutablePointer<Float>]
        /// Positive X, Y, B−Y of the current scale.
        let xyb: [UnsafeMutablePointer<Float>]
        /// Blurred mean, blurred square, blurred product with the reference; the blur's horizontal pass.
        let mu, sigma22, sigma12, horizontal: UnsafeMutablePointer<Float>
        /// One source row padded with 5 zeros on each side.
        let row: UnsafeMutablePointer<Float>

        static let planeCount = 10

        init(width: Int, height: Int) {
            let capacity = width * height, total = capacity * Self.planeCount + width + 10
            let storage = UnsafeMutablePointer<Float>.allocate(capacity: total)
            storage.initialize(repeating: 0, count: total)
            let planes = (0..<Self.planeCount).map { storage + $0 * capacity }
            self.capacity = capacity
            self.storage = storage
            linear = Array(planes[0..<3])
            xyb = Array(planes[3..<6])
            (mu, sigma22, sigma12, horizontal) = (planes[6], planes[7], planes[8], planes[9])
            row = storage + Self.planeCount * capacity
        }

        deinit { storage.deallocate() }

        /// Loads `buffer` (at most `capacity` pixels) as linear RGB.
        func load(_ buffer: PixelBuffer) {
            Kernels.linearize(buffer, into: linear[0], linear[1], linear[2])
        }

        /// Makes the positive XYB planes of the current linear planes (`count` pixels).
        func makeXYB(count: Int) {
            Kernels.positiveXYB(r: linear[0], g: linear[1], b: linear[2], count: count, x: xyb[0], y: xyb[1], bMinusY: xyb[2])
        }

        /// Halves the linear planes in place.
        func halve(width: Int, height: Int) {
            for plane in linear { Kernels.halve(plane, width: width, height: height) }
        }

        /// Blurs `a` (or `a × b`) of the current scale into `out`.
        func blur(_ a: UnsafePointer<Float>, times b: UnsafePointer<Float>? = nil, width: Int, height: Int,
                  into out: UnsafeMutablePointer<Float>) {
            Kernels.blur(a, times: b, width: width, height: height, row: row, horizontal: horizontal, into: out)
        }
    }
}

// Safe: a Workspace is only ever used by the one scoring that took it from `Reference`'s pool (under its lock)
// and gives it back when done; it is never shared while in use.
extension SSIMULACRA2.Workspace: @unchecked Sendable {}
