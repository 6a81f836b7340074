import Foundation

/// The sliding-window box passes behind `PixelBuffer.blurred(radius:)`.
///
/// Working values are 16-bit: a byte × 256, so three passes round far below one output level.
enum BoxBlur {
    /// Three horizontal box passes over every row of 8-bit RGBA `source`, written to `plane`.
    static func horizontal(source: UnsafePointer<UInt8>, sourceStride: Int, into plane: UnsafeMutablePointer<UInt16>,
                           width: Int, height: Int, plan: BoxBlurPlan) {
        let n = width * 4
        let scratch0 = UnsafeMutablePointer<UInt16>.allocate(capacity: n)
        let scratch1 = UnsafeMutablePointer<UInt16>.allocate(capacity: n)
        defer { scratch0.deallocate(); scratch1.deallocate() }
        let passes = plan.radii.map { r in (r, BoxBlurPlan.slideIndices(count: width, radius: r), BoxBlurPlan.firstWindow(count: width, radius: r)) }
        for y in 0..<height {
            let row = source + y * sourceStride
            for e in 0..<n { scratch0[e] = UInt16(row[e]) << 8 }
            for (k, (r, slide, first)) in passes.enumerated() {
                let input = k == 1 ? scratch1 : scratch0
                let output = k == 0 ? scratch1 : (k == 1 ? scratch0 : plane + y * n)
                if r == 0 {
                    output.update(from: input, count: n)
                } else {
                    slideRow(UnsafePointer(input), output, width: width, radius: r, entering: slide.entering,
                             leaving: slide.leaving, first: first)
                }
            }
        }
    }

    /// One box pass along a row of RGBA 16-bit values.
    private static func slideRow(_ input: UnsafePointer<UInt16>, _ output: UnsafeMutablePointer<UInt16>, width: Int,
                                 radius r: Int, entering: [Int], leaving: [Int], first: (periods: Int, remainder: [Int])) {
        let recip = BoxBlurPlan.reciprocal(width: 2 * r + 1)
        let half = 1 << 31
        var s0 = 0, s1 = 0, s2 = 0, s3 = 0
        if first.periods > 0 {
            for x in 0..<width {
                s0 += Int(input[x * 4]); s1 += Int(input[x * 4 + 1]); s2 += Int(input[x * 4 + 2]); s3 += Int(input[x * 4 + 3])
            }
            let m = 2 * first.periods
            s0 *= m; s1 *= m; s2 *= m; s3 *= m
        }
        for i in first.remainder {
            s0 += Int(input[i * 4]); s1 += Int(input[i * 4 + 1]); s2 += Int(input[i * 4 + 2]); s3 += Int(input[i * 4 + 3])
        }
        entering.withUnsafeBufferPointer { enter in
            leaving.withUnsafeBufferPointer { leave in
                guard let enter = enter.baseAddress, let leave = leave.baseAddress else { return }
                if 2 * r + 1 <= 257 {
                    // Narrow window: the four channel sums as one Int32 vector, divided in Float (exact below 2^24).
                    let inverse = SIMD4<Float>(repeating: 1 / Float(2 * r + 1))
                    let magic = SIMD4<Float>(repeating: roundingMagic)
                    var sum = SIMD4<Int32>(Int32(truncatingIfNeeded: s0), Int32(truncatingIfNeeded: s1),
                                           Int32(truncatingIfNeeded: s2), Int32(truncatingIfNeeded: s3))
                    let source = UnsafeRawPointer(input)
                    let out = UnsafeMutableRawPointer(output)
                    for x in 0..<width {
                        let bits = unsafeBitCast(SIMD4<Float>(sum) * inverse + magic, to: SIMD4<UInt32>.self)
                        out.storeBytes(of: SIMD4<UInt16>(truncatingIfNeeded: bits), toByteOffset: x * 8, as: SIMD4<UInt16>.self)
                        let a = source.loadUnaligned(fromByteOffset: enter[x] * 8, as: SIMD4<UInt16>.self)
                        let b = source.loadUnaligned(fromByteOffset: leave[x] * 8, as: SIMD4<UInt16>.self)
                        sum &+= SIMD4<Int32>(truncatingIfNeeded: a) &- SIMD4<Int32>(truncatingIfNeeded: b)
                    }
                    return
                }
                for x in 0..<width {
                    let o = output + x * 4
                    o[0] = UInt16(truncatingIfNeeded: (s0 &* recip &+ half) >> 32)
                    o[1] = UInt16(truncatingIfNeeded: (s1 &* recip &+ half) >> 32)
                    o[2] = UInt16(truncatingIfNeeded: (s2 &* recip &+ half) >> 32)
                    o[3] = UInt16(truncatingIfNeeded: (s3 &* recip &+ half) >> 32)
                    let a = input + enter[x] * 4, b = input + leave[x] * 4
                    s0 &+= Int(a[0]) &- Int(b[0])
                    s1 &+= Int(a[1]) &- Int(b[1])
                    s2 &+= Int(a[2]) &- Int(b[2])
                    s3 &+= Int(a[3]) &- Int(b[3])
                }
            }
        }
    }

    /// 1.5 × 2^23: adding it to a Float in `0 ..< 2^22` leaves that value rounded to the nearest integer in
    /// the low bits of the bit pattern. Unlike `Int32(_: Float)`, which checks its range and stops the compiler
    /// vectorising, this is plain vector arithmetic.
    static let roundingMagic: Float = 12_582_912

    /// Columns per vertical strip: a strip's rows (`stripColumns * 4` values) stay in cache while three
    /// passes slide down it.
    static let stripColumns = 64

    /// Three vertical box passes over `plane` (rows of `width * 4` values), rounded to bytes into `output`
    /// (rows `outputStride` bytes apart). Works in strips of `stripColumns` columns so only two small
    /// strip buffers are needed besides the plane.
    static func vertical(_ plane: UnsafePointer<UInt16>, into output: UnsafeMutablePointer<UInt8>, outputStride: Int,
                         width: Int, height: Int, plan: BoxBlurPlan) {
        let planeStride = width * 4
        let stripValues = min(width, stripColumns) * 4
        let strip0 = UnsafeMutablePointer<UInt16>.allocate(capacity: stripValues * height)
        let strip1 = UnsafeMutablePointer<UInt16>.allocate(capacity: stripValues * height)
        let sums = UnsafeMutablePointer<Int>.allocate(capacity: stripValues)
        defer { strip0.deallocate(); strip1.deallocate(); sums.deallocate() }
        let rowIndices = plan.radii.map { r in
            (BoxBlurPlan.slideIndices(count: height, radius: r), BoxBlurPlan.firstWindow(count: height, radius: r))
        }
        var x0 = 0
        while x0 < width {
            let n = min(stripColumns, width - x0) * 4
            for (k, (slide, first)) in rowIndices.enumerated() {
                let r = plan.radii[k]
                let (input, inputStride): (UnsafePointer<UInt16>, Int) =
                    k == 0 ? (plane + x0 * 4, planeStride) : (UnsafePointer(k == 1 ? strip0 : strip1), n)
                let pass = Pass(input: input, inputStride: inputStride, count: n, height: height, radius: r,
                                entering: slide.entering, leaving: slide.leaving, first: first, sums: sums)
                if k < 2 {
                    pass.run(into: k == 0 ? strip0 : strip1, stride: n)
                } else {
                    pass.run(intoBytes: output + x0 * 4, stride: outputStride)
                }
            }
            x0 += stripColumns
        }
    }

    /// One vertical box pass down `count` interleaved channel values of `height` rows.
    private struct Pass {
        let input: UnsafePointer<UInt16>
        let inputStride: Int
        let count: Int
        let height: Int
        let radius: Int
        let entering: [Int]
        let leaving: [Int]
        let first: (periods: Int, remainder: [Int])
        let sums: UnsafeMutablePointer<Int>

        /// Fills `sums` with the first window's sums.
        private func firstSums() {
            let n = count
            sums.update(repeating: 0, count: n)
            if first.periods > 0 {
                for y in 0..<height {
                    let row = input + y * inputStride
                    for e in 0..<n { sums[e] &+= Int(row[e]) }
                }
                let m = 2 * first.periods
                for e in 0..<n { sums[e] &*= m }
            }
            for j in first.remainder {
                let row = input + j * inputStride
                for e in 0..<n { sums[e] &+= Int(row[e]) }
            }
        }

        /// Whether the window is at most 257 wide: sums then stay under 2^24, exact in Int32 and in Float,
        /// whose operations vectorise on every x86-64.
        private var isNarrow: Bool { 2 * radius + 1 <= 257 }

        /// The pass into 16-bit rows `stride` values apart.
        func run(into output: UnsafeMutablePointer<UInt16>, stride: Int) {
            firstSums()
            let n = count
            if isNarrow {
                let narrow = UnsafeMutablePointer<Int32>.allocate(capacity: n)
                defer { narrow.deallocate() }
                for e in 0..<n { narrow[e] = Int32(truncatingIfNeeded: sums[e]) }
                let inverse = 1 / Float(2 * radius + 1)
                for y in 0..<height {
                    let o = output + y * stride
                    for e in 0..<n { o[e] = UInt16(truncatingIfNeeded: (Float(narrow[e]) * inverse + BoxBlur.roundingMagic).bitPattern) }
                    let enter = input + entering[y] * inputStride, leave = input + leaving[y] * inputStride
                    for e in 0..<n { narrow[e] &+= Int32(enter[e]) &- Int32(leave[e]) }
                }
            } else {
                let reciprocal = BoxBlurPlan.reciprocal(width: 2 * radius + 1)
                for y in 0..<height {
                    let o = output + y * stride
                    for e in 0..<n { o[e] = UInt16(truncatingIfNeeded: (sums[e] &* reciprocal &+ (1 << 31)) >> 32) }
                    let enter = input + entering[y] * inputStride, leave = input + leaving[y] * inputStride
                    for e in 0..<n { sums[e] &+= Int(enter[e]) &- Int(leave[e]) }
                }
            }
        }

        /// The last pass, rounded to bytes in rows `stride` bytes apart.
        func run(intoBytes output: UnsafeMutablePointer<UInt8>, stride: Int) {
            firstSums()
            let n = count
            if isNarrow {
                let narrow = UnsafeMutablePointer<Int32>.allocate(capacity: n)
                defer { narrow.deallocate() }
                for e in 0..<n { narrow[e] = Int32(truncatingIfNeeded: sums[e]) }
                // One multiply: the average (× 256) and the final ÷ 256 with rounding.
                let inverse = 1 / (Float(2 * radius + 1) * 256)
                for y in 0..<height {
                    let o = output + y * stride
                    for e in 0..<n { o[e] = UInt8(truncatingIfNeeded: (Float(narrow[e]) * inverse + BoxBlur.roundingMagic).bitPattern) }
                    let enter = input + entering[y] * inputStride, leave = input + leaving[y] * inputStride
                    for e in 0..<n { narrow[e] &+= Int32(enter[e]) &- Int32(leave[e]) }
                }
            } else {
                let reciprocal = BoxBlurPlan.reciprocal(width: 2 * radius + 1)
                for y in 0..<height {
                    let o = output + y * stride
                    for e in 0..<n {
                        let v = (sums[e] &* reciprocal &+ (1 << 31)) >> 32
                        o[e] = UInt8(truncatingIfNeeded: (v &+ 128) >> 8)
                    }
                    let enter = input + entering[y] * inputStride, leave = input + leaving[y] * inputStride
                    for e in 0..<n { sums[e] &+= Int(enter[e]) &- Int(leave[e]) }
                }
            }
        }
    }
}
