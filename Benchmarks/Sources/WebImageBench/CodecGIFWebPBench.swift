import CBenchHarness
import Foundation
import ImageCodec

/// GIF and WebP decode throughput: ImageCodec against libwebp and giflib called directly from C, same run.
///
/// Inputs are made at bench time with ImageCodec's own encoders from a synthetic pattern: WebP lossy (q 0.9)
/// and lossless at 1920×1080, and a 100-frame 480×360 GIF with a moving pattern and partial transparency.
/// Ours decodes for display (premultiplied); the C harness decodes the same way (MODE_rgbA, or DGifSlurp
/// plus an RGBA compositor that copies every frame out).
enum CodecGIFWebPBench: BenchSuite {
    static let name = "codec-gif-webp"

    static func run(_ settings: BenchSettings) throws {
        let iterations = settings.quick ? 5 : 31
        let still = try pattern(width: 1920, height: 1080, phase: 0, transparentHole: false)
        let lossy = try WebPEncoder.encode(still, options: EncodeOptions(quality: 0.9))
        let lossless = try WebPEncoder.encode(still, options: EncodeOptions(isLossless: true))
        for (label, data) in [("WebP lossy 1920×1080 decode", lossy), ("WebP lossless 1920×1080 decode", lossless)] {
            let megapixels = 1920.0 * 1080.0 / 1e6
            let (ours, c) = try alternating(iterations: iterations) {
                _ = try ImageDecoder.decode(data, options: DecodeOptions(keepsOriginalData: false))
            } _: {
                let status = data.withUnsafeBytes { bench_webp_decode($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count, 1) }
                guard status == 0 else { throw BenchFailure("bench_webp_decode failed: \(status)") }
            }
            add(label, ours: megapixels / ours, c: megapixels / c, peer: "C harness (libwebp WebPDecode direct)")
        }

        let frameCount = 100
        let frames = try (0..<frameCount).map { i in
            ImageFrame(buffer: try pattern(width: 480, height: 360, phase: i, transparentHole: true), duration: 0.04)
        }
        let gif = try GIFEncoder.encode(frames, loopCount: 0, options: EncodeOptions(), dithering: false)
        let megapixels = 480.0 * 360.0 * Double(frameCount) / 1e6
        let gifIterations = settings.quick ? 3 : 15
        let (ours, c) = try alternating(iterations: gifIterations) {
            let image = try ImageDecoder.decode(gif, options: DecodeOptions(preloadAllFrames: true, keepsOriginalData: false))
            guard image.frameCount == frameCount else { throw BenchFailure("GIF decoded \(image.frameCount) frames") }
        } _: {
            let count = gif.withUnsafeBytes { bench_gif_decode_all($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }
            guard count == frameCount else { throw BenchFailure("bench_gif_decode_all returned \(count)") }
        }
        add("GIF 100×480×360 decode, all frames", ours: megapixels / ours, c: megapixels / c,
            peer: "C harness (giflib DGifSlurp + compositing)")
        // Lazy decode played forward frame by frame (what an animated view does), against the same C figure.
        let (lazy, c2) = try alternating(iterations: gifIterations) {
            let image = try ImageDecoder.decode(gif, options: DecodeOptions(keepsOriginalData: false))
            for i in 1..<image.frameCount { _ = try image.frame(at: i) }
        } _: {
            let count = gif.withUnsafeBytes { bench_gif_decode_all($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }
            guard count == frameCount else { throw BenchFailure("bench_gif_decode_all returned \(count)") }
        }
        add("GIF 100×480×360 lazy decode, played in order", ours: megapixels / lazy, c: megapixels / c2,
            peer: "C harness (giflib DGifSlurp + compositing)", goal: nil)
    }

    /// Median seconds of `ours` and of `peer`, run alternately (one of each per round, after a warm-up round)
    /// so that load from other processes on the machine affects both alike.
    /// `clock` gives seconds (default: monotonic wall time).
    static func alternating(iterations: Int, _ ours: () throws -> Void, _ peer: () throws -> Void,
                            clock: () -> Double = Clock.now) rethrows -> (Double, Double) {
        try ours()
        try peer()
        var a: [Double] = [], b: [Double] = []
        for _ in 0..<iterations {
            var t0 = clock()
            try ours()
            a.append(clock() - t0)
            t0 = clock()
            try peer()
            b.append(clock() - t0)
        }
        a.sort()
        b.sort()
        return (a[a.count / 2], b[b.count / 2])
    }

    private static func add(_ name: String, ours: Double, c: Double, peer: String, goal: String? = "≤ 1.05× C") {
        BenchReport.shared.add(BenchResult(suite: Self.name, name: name, unit: "Mpx/s", ours: ours, peer: c, peerName: peer,
                                           higherIsBetter: true, goal: goal, goalMet: goal == nil ? nil : c / ours <= 1.05))
    }

    /// A smooth, photo-like synthetic picture with a little noise; `phase` moves it; `transparentHole`
    /// punches a transparent moving square.
    static func pattern(width: Int, height: Int, phase: Int, transparentHole: Bool) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        var seed: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                let noise = Int(seed >> 29) - 4
                let o = (y * width + x) * 4
                let u = Double(x + phase * 4) / Double(width), v = Double(y) / Double(height)
                bytes[o] = UInt8(clamping: Int(128 + 100 * sin(u * 6.3)) + noise)
                bytes[o + 1] = UInt8(clamping: Int(128 + 100 * cos(v * 4.1 + u)) + noise)
                bytes[o + 2] = UInt8(clamping: Int(255 * u * v) + noise)
                let hx = (phase * 3) % width
                if transparentHole, x >= hx, x < hx + width / 5, y >= height / 3, y < height / 2 { bytes[o + 3] = 0 }
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }
}

/// A benchmark precondition failed.
