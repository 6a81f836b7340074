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

    /// One vertical box pass from `input` to `output` (both planes of `width * 4` values per row).
    static func vertical(_ input: UnsafeMutablePointer<UInt16>, into output: UnsafeMutablePointer<UInt16>,
                         width: Int, height: Int, radius r: Int) {
        let n = width * 4
        if r == 0 { output.update(from: input, count: n * height); return }
        columns(UnsafePointer(input), width: width, height: height, radius: r) { y, acc, recip in
            let o = output + y * n
            for e in 0..<n { o[e] = UInt16(truncatingIfNeeded: (acc[e] &* recip &+ (1 << 31)) >> 32) }
        }
    }

    /// The last vertical pass: rounds the 16-bit values to bytes into rows `stride` apart.
    static func vertical(_ input: UnsafeMutablePointer<UInt16>, intoBytes output: UnsafeMutablePointer<UInt8>,
                         stride: Int, width: Int, height: Int, radius r: Int) {
        let n = width * 4
        if r == 0 {
            for y in 0..<height {
                let i = input + y * n, o = output + y * stride
                for e in 0..<n { o[e] = UInt8(truncatingIfNeeded: (Int(i[e]) &+ 128) >> 8) }
            }
            return
        }
        columns(UnsafePointer(input), width: width, height: height, radius: r) { y, acc, recip in
            let o = output + y * stride
            for e in 0..<n {
                let v = (acc[e] &* recip &+ (1 << 31)) >> 32
                o[e] = UInt8(truncatingIfNeeded: (v &+ 128) >> 8)
            }
        }
    }

    /// Slides a window of `2r + 1` rows down all columns at once, calling `emit(y, sums, reciprocal)` for
    /// each output row.
    private static func columns(_ input: UnsafePointer<UInt16>, width: Int, height: Int, radius r: Int,
                                emit: (Int, UnsafeMutablePointer<Int>, Int) -> Void) {
        let n = width * 4
        let acc = UnsafeMutablePointer<Int>.allocate(capacity: n)
        defer { acc.deallocate() }
        acc.initialize(repeating: 0, count: n)
        let first = BoxBlurPlan.firstWindow(count: height, radius: r)
        if first.periods > 0 {
            for y in 0..<height {
                let row = input + y * n
                for e in 0..<n { acc[e] &+= Int(row[e]) }
            }
            let m = 2 * first.periods
            for e in 0..<n { acc[e] &*= m }
        }
        for j in first.remainder {
            let row = input + j * n
            for e in 0..<n { acc[e] &+= Int(row[e]) }
        }
        let recip = BoxBlurPlan.reciprocal(width: 2 * r + 1)
        for y in 0..<height {
            emit(y, acc, recip)
            let enter = input + BoxBlurPlan.mirror(y + r + 1, count: height) * n
            let leave = input + BoxBlurPlan.mirror(y - r, count: height) * n
            for e in 0..<n { acc[e] &+= Int(enter[e]) &- Int(leave[e]) }
        }
    }
}
