import Foundation

extension SSIMULACRA2 {
    /// One channel of floats, row-major.
    struct Plane: Sendable {
        let width: Int
        let height: Int
        var values: [Float]
        var count: Int { width * height }

        init(width: Int, height: Int, values: [Float]) {
            self.width = width
            self.height = height
            self.values = values
        }

        func multiplied(by other: Plane) -> Plane {
            var out = [Float](repeating: 0, count: count)
            values.withUnsafeBufferPointer { a in
                other.values.withUnsafeBufferPointer { b in
                    out.withUnsafeMutableBufferPointer { o in
                        for i in 0..<o.count { o[i] = a[i] * b[i] }
                    }
                }
            }
            return Plane(width: width, height: height, values: out)
        }

        /// The Gaussian blur of the metric: σ 1.5, 11 taps (radius 5, weights normalised over them); zeros beyond
        /// the left and right edges, mirrored (`d c b a | a b c d`) at the top and bottom, as the PyPI port does
        /// (it pads one axis with zeros and reflects the other, on the image transposed, so x gets the zeros).
        func blurred() -> Plane {
            let kernel = Self.kernel
            let r = kernel.count / 2
            let w = width, h = height
            var horizontal = [Float](repeating: 0, count: count)
            values.withUnsafeBufferPointer { src in
                horizontal.withUnsafeMutableBufferPointer { dst in
                    kernel.withUnsafeBufferPointer { k in
                        for y in 0..<h {
                            let row = y * w
                            for x in 0..<w {
                                var sum: Float = 0
                                let first = max(0, r - x), last = min(2 * r, w - 1 - x + r)
                                if first <= last {
                                    for t in first...last { sum += k[t] * src[row + x - r + t] }
                                }
                                dst[row + x] = sum
                            }
                        }
                    }
                }
            }
            var out = [Float](repeating: 0, count: count)
            horizontal.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    kernel.withUnsafeBufferPointer { k in
                        for y in 0..<h {
                            let row = y * w
                            for t in 0...(2 * r) {
                                let from = Self.mirror(y - r + t, h) * w
                                let weight = k[t]
                                for x in 0..<w { dst[row + x] += weight * src[from + x] }
                            }
                        }
                    }
                }
            }
            return Plane(width: width, height: height, values: out)
        }

        /// The index `i` mirrored into `0..<n` (half-sample symmetric, repeated for tiny `n`).
        static func mirror(_ i: Int, _ n: Int) -> Int {
            var i = i
            while i < 0 || i >= n { i = i < 0 ? -i - 1 : 2 * n - 1 - i }
            return i
        }

        static let kernel: [Float] = {
            let sigma = 1.5, radius = 5
            let raw = (-radius...radius).map { exp(-0.5 * Double($0 * $0) / (sigma * sigma)) }
            let total = raw.reduce(0, +)
            return raw.map { Float($0 / total) }
        }()
    }

    /// Linear-light RGB planes of an image composited on mid grey (the scales are made from these).
    struct LinearImage {
        let width: Int
        let height: Int
        var rgb: [[Float]]

        /// sRGB 8-bit to linear, composited on grey 0.5 (in the encoded values) where not opaque.
        init(_ buffer: PixelBuffer) {
            let w = buffer.width, h = buffer.height, stride = buffer.bytesPerRow
            width = w
            height = h
            let n = w * h
            var r = [Float](repeating: 0, count: n), g = r, b = r
            let premultiplied = buffer.pixelFormat == .rgba8Premultiplied
            let table = Self.toLinear
            buffer.withUnsafeBytes { bytes in
                for y in 0..<h {
                    let row = y * stride
                    for x in 0..<w {
                        let p = row + x * 4, i = y * w + x
                        let a = Float(bytes[p + 3]) / 255
                        var c = SIMD3<Float>(Float(bytes[p]), Float(bytes[p + 1]), Float(bytes[p + 2]))
                        if a < 1 { c = (premultiplied ? c : c * a) + SIMD3(repeating: 127.5 * (1 - a)) }
                        r[i] = Self.linear(c.x, table)
                        g[i] = Self.linear(c.y, table)
                        b[i] = Self.linear(c.z, table)
                    }
                }
            }
            rgb = [r, g, b]
        }

        private init(width: Int, height: Int, rgb: [[Float]]) {
            self.width = width
            self.height = height
            self.rgb = rgb
        }

        /// Exact for whole values (the table), interpolated between them (composited pixels).
        static func linear(_ v: Float, _ table: [Float]) -> Float {
            let i = Int(v)
            if Float(i) == v { return table[i] }
            let f = v - Float(i)
            return table[i] * (1 - f) + table[min(i + 1, 255)] * f
        }

        static let toLinear: [Float] = (0..<256).map { v in
            let c = Double(v) / 255
            return Float(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4))
        }

        /// Half the size (rounded up), each pixel the mean of its (up to) 2×2 block.
        func halved() -> LinearImage {
            let w2 = (width + 1) / 2, h2 = (height + 1) / 2
            var planes: [[Float]] = []
            for plane in rgb {
                var out = [Float](repeating: 0, count: w2 * h2)
                plane.withUnsafeBufferPointer { src in
                    out.withUnsafeMutableBufferPointer { dst in
                        for oy in 0..<h2 {
                            let y0 = oy * 2, y1 = min(y0 + 1, height - 1)
                            for ox in 0..<w2 {
                                let x0 = ox * 2, x1 = min(x0 + 1, width - 1)
                                // A block cut by the edge averages the pixels it has.
                                var sum = src[y0 * width + x0]
                                var count: Float = 1
                                if x1 != x0 { sum += src[y0 * width + x1]; count += 1 }
                                if y1 != y0 {
                                    sum += src[y1 * width + x0]; count += 1
                                    if x1 != x0 { sum += src[y1 * width + x1]; count += 1 }
                                }
                                dst[oy * w2 + ox] = sum / count
                            }
                        }
                    }
                }
                planes.append(out)
            }
            return LinearImage(width: w2, height: h2, rgb: planes)
        }

        /// The XYB planes made positive as the metric uses them: X × 14 + 0.42, Y + 0.01, B − Y + 0.55.
        func positiveXYB() -> [Plane] {
            let n = width * height
            var x = [Float](repeating: 0, count: n), y = x, b = x
            let bias: Float = 0.0037930732552754493
            let cbrtBias = Float(cbrt(Double(bias)))
            for i in 0..<n {
                let r = rgb[0][i], g = rgb[1][i], bl = rgb[2][i]
                let m0 = max(0.30 * r + 0.622 * g + 0.078 * bl + bias, 0)
                let m1 = max(0.23 * r + 0.692 * g + 0.078 * bl + bias, 0)
                let m2 = max(0.24342268924547819 * r + 0.20476744424496821 * g + 0.5518098665095537 * bl + bias, 0)
                let l0 = Float(cbrt(Double(m0))) - cbrtBias
                let l1 = Float(cbrt(Double(m1))) - cbrtBias
                let l2 = Float(cbrt(Double(m2))) - cbrtBias
                let xv = 0.5 * (l0 - l1), yv = 0.5 * (l0 + l1)
                x[i] = xv * 14 + 0.42
                y[i] = yv + 0.01
                b[i] = (l2 - yv) + 0.55
            }
            return [Plane(width: width, height: height, values: x), Plane(width: width, height: height, values: y),
                    Plane(width: width, height: height, values: b)]
        }
    }
}
