import Foundation
import WebImage

/// Pixel processing: resize (4000×3000 → 400 px) and blur (radius 20 on 1920×1080), each against a
/// straightforward implementation written here, measured in the same run.
enum ProcessingBench: BenchSuite {
    static let name = "processing"

    static func run(_ settings: BenchSettings) throws {
        let iterations = settings.quick ? 3 : 10
        let photo = try syntheticPhoto(width: 4000, height: 3000)

        // Resize: ours (each filter) against a naive direct 2-D area average in Double.
        var naiveResult: PixelBuffer?
        let naive = try Clock.median(iterations: settings.quick ? 1 : 3, warmup: 0) {
            naiveResult = try NaiveProcessing.areaResize(photo, width: 400, height: 300)
        }
        for filter in [ResamplingFilter.area, .triangle, .lanczos3] {
            var ours: PixelBuffer?
            let t = try Clock.median(iterations: iterations) { ours = try photo.resized(maxPixelSize: 400, filter: filter) }
            if filter == .area, let ours, let naiveResult { checkClose(ours, naiveResult, what: "area resize") }
            BenchReport.shared.add(BenchResult(
                suite: name, name: "resize 4000×3000 → 400×300 (\(filter.rawValue))", unit: "ms", ours: t * 1000,
                peer: naive * 1000, peerName: "naive 2-D area average (Double)", higherIsBetter: false,
                goal: "≤ 0.25× naive", goalMet: t <= naive * 0.25))
        }

        // Streaming: the same resize fed row by row through RowResampler (what PNG/GIF thumbnails do).
        let streamed = try Clock.median(iterations: iterations) {
            let resampler = try RowResampler(sourceWidth: 4000, sourceHeight: 3000, destinationWidth: 400,
                                             destinationHeight: 300, filter: .lanczos3)
            try photo.withUnsafeBytes { bytes in
                for y in 0..<3000 {
                    try resampler.consume(row: UnsafeRawBufferPointer(rebasing: bytes[y * photo.bytesPerRow ..< y * photo.bytesPerRow + 16000]))
                }
            }
            _ = try resampler.finish()
        }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "RowResampler 3000 rows → 400×300 (lanczos3, 7 rows held)", unit: "ms", ours: streamed * 1000,
            peer: naive * 1000, peerName: "naive 2-D area average (Double)", higherIsBetter: false, goal: nil, goalMet: nil))

        // EXIF orientation 6 (rotate 90° clockwise) of the 12-megapixel photo: ours (tiled) against a plain loop.
        var naiveRotated: PixelBuffer?
        let naiveRotate = try Clock.median(iterations: settings.quick ? 1 : 3) { naiveRotated = try NaiveProcessing.rotateClockwise(photo) }
        var rotated: PixelBuffer?
        let rotate = try Clock.median(iterations: iterations) { rotated = try photo.applyingOrientation(.right) }
        if rotated != naiveRotated { print("  orientation: ours differs from the naive rotation!") }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "apply EXIF orientation 6 to 4000×3000", unit: "ms", ours: rotate * 1000,
            peer: naiveRotate * 1000, peerName: "naive per-pixel rotation (Swift arrays)", higherIsBetter: false,
            goal: "≤ 0.5× naive", goalMet: rotate <= naiveRotate * 0.5))

        // Blur: ours against a straightforward separable Gaussian (kernel ±3σ, Double).
        let frame = try syntheticPhoto(width: 1920, height: 1080)
        let naiveBlur = try Clock.median(iterations: 1, warmup: 0) { _ = try NaiveProcessing.gaussianBlur(frame, sigma: 20) }
        for radius in [2.0, 20, 80] {
            let t = try Clock.median(iterations: iterations) { _ = try frame.blurred(radius: radius) }
            BenchReport.shared.add(BenchResult(
                suite: name, name: String(format: "blur radius %.0f on 1920×1080", radius), unit: "ms", ours: t * 1000,
                peer: naiveBlur * 1000, peerName: "naive separable Gaussian σ 20 (Double)", higherIsBetter: false,
                goal: "≤ 0.02× naive, ≤ 50 ms", goalMet: t <= naiveBlur * 0.02 && t * 1000 <= 50))
        }
    }

    /// A photo-like premultiplied image: smooth gradients plus fine texture, partly translucent.
    static func syntheticPhoto(width: Int, height: Int) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height)
        let stride = buffer.bytesPerRow
        buffer.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) -> Void in
            var state: UInt32 = 12345
            for y in 0..<height {
                for x in 0..<width {
                    state = state &* 1664525 &+ 1013904223
                    let o: Int = y * stride + x * 4
                    let a: Int = x < width / 8 ? 128 + (y & 127) : 255
                    let r: Int = (x * 255 / width) ^ Int(state >> 28)
                    let g: Int = min(255, y * 255 / height + Int(state >> 29))
                    let b: Int = (x + y) & 255
                    bytes[o] = UInt8(r * a / 255)
                    bytes[o + 1] = UInt8(g * a / 255)
                    bytes[o + 2] = UInt8(b * a / 255)
                    bytes[o + 3] = UInt8(a)
                }
            }
        }
        return buffer
    }

    /// Sanity check that ours and the naive peer compute the same thing (printed, not fatal).
    static func checkClose(_ a: PixelBuffer, _ b: PixelBuffer, what: String) {
        let worst = zip(a.packedBytes, b.packedBytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
        print("  \(what): largest difference from the naive peer \(worst) level(s)")
    }
}

/// The straightforward implementations a developer would write first: the peers of the processing suite.
enum NaiveProcessing {
    /// Direct 2-D area averaging: for every destination pixel, every covered source pixel weighted by its
    /// exact coverage, in Double, through Swift arrays.
    static func areaResize(_ source: PixelBuffer, width: Int, height: Int) throws -> PixelBuffer {
        let src = source.packedBytes
        let (sw, sh) = (source.width, source.height)
        let sx = Double(sw) / Double(width), sy = Double(sh) / Double(height)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let y0 = Double(y) * sy, y1 = Double(y + 1) * sy
            for x in 0..<width {
                let x0 = Double(x) * sx, x1 = Double(x + 1) * sx
                var acc = [0.0, 0.0, 0.0, 0.0]
                var total = 0.0
                for j in Int(y0)..<min(sh, Int(y1.rounded(.up))) {
                    let wy = min(y1, Double(j + 1)) - max(y0, Double(j))
                    for i in Int(x0)..<min(sw, Int(x1.rounded(.up))) {
                        let w = wy * (min(x1, Double(i + 1)) - max(x0, Double(i)))
                        for c in 0..<4 { acc[c] += w * Double(src[(j * sw + i) * 4 + c]) }
                        total += w
                    }
                }
                for c in 0..<4 { out[(y * width + x) * 4 + c] = UInt8(min(255, max(0, (acc[c] / total).rounded()))) }
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: source.pixelFormat, bytes: out)
    }

    /// Rotation by 90° clockwise pixel by pixel in row order of the result, through Swift arrays.
    static func rotateClockwise(_ source: PixelBuffer) throws -> PixelBuffer {
        let src = source.packedBytes
        let (w, h) = (source.width, source.height)
        var out = [UInt8](repeating: 0, count: src.count)
        for y in 0..<w {
            for x in 0..<h {
                let from = ((h - 1 - x) * w + y) * 4, to = (y * h + x) * 4
                for c in 0..<4 { out[to + c] = src[from + c] }
            }
        }
        return try PixelBuffer(width: h, height: w, pixelFormat: source.pixelFormat, bytes: out)
    }

    /// A separable Gaussian with a sampled kernel of ±3σ, clamped edges, in Double.
    static func gaussianBlur(_ source: PixelBuffer, sigma: Double) throws -> PixelBuffer {
        let r = Int((3 * sigma).rounded(.up))
        var kernel = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let sum = kernel.reduce(0, +)
        kernel = kernel.map { $0 / sum }
        let (w, h) = (source.width, source.height)
        let src = source.packedBytes.map(Double.init)
        var tmp = [Double](repeating: 0, count: src.count)
        for y in 0..<h {
            for x in 0..<w {
                for c in 0..<4 {
                    var acc = 0.0
                    for k in -r...r { acc += kernel[k + r] * src[(y * w + min(w - 1, max(0, x + k))) * 4 + c] }
                    tmp[(y * w + x) * 4 + c] = acc
                }
            }
        }
        var out = [UInt8](repeating: 0, count: src.count)
        for y in 0..<h {
            for x in 0..<w {
                for c in 0..<4 {
                    var acc = 0.0
                    for k in -r...r { acc += kernel[k + r] * tmp[(min(h - 1, max(0, y + k)) * w + x) * 4 + c] }
                    out[(y * w + x) * 4 + c] = UInt8(min(255, max(0, acc.rounded())))
                }
            }
        }
        return try PixelBuffer(width: w, height: h, pixelFormat: source.pixelFormat, bytes: out)
    }
}
