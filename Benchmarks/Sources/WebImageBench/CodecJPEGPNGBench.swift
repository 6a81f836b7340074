import CBenchHarness
import Foundation
import WebImage

/// Decode throughput of ImageCodec's JPEG and PNG paths against libjpeg-turbo and libpng called directly
/// from C (CBenchHarness) in the same run, on inputs generated here with our own encoders from a synthetic
/// photo-like pattern.
///
/// Both sides produce the same output: RGBA8 in one buffer; PNG (with alpha) premultiplied on both sides,
/// JPEG opaque (premultiplying is a no-op). Samples alternate C-first and ours-first to share machine drift
/// and allocator state; each side reports its median thread CPU time (the machine is shared, so wall time
/// mostly measures the neighbours; decoding is single-threaded and CPU-bound, page faults included).
enum CodecJPEGPNGBench: BenchSuite {
    static let name = "codec-jpeg-png"

    static func run(_ settings: BenchSettings) throws {
        let small = settings.quick ? 5 : 31
        let large = settings.quick ? 3 : 11
        let hd = try pattern(width: 1920, height: 1080, alpha: false)
        let big = try pattern(width: 4000, height: 3000, alpha: false)
        let hdAlpha = try pattern(width: 1920, height: 1080, alpha: true)
        let cases: [(String, Data, Int)] = [
            ("JPEG 1920×1080 baseline decode", try JPEGEncoder.encode(hd, options: EncodeOptions(quality: 0.9)), small),
            ("JPEG 1920×1080 progressive decode",
             try JPEGEncoder.encode(hd, options: EncodeOptions(quality: 0.9, isProgressive: true)), small),
            ("JPEG 4000×3000 baseline decode", try JPEGEncoder.encode(big, options: EncodeOptions(quality: 0.9)), large),
            ("PNG RGBA 1920×1080 decode", try PNGEncoder.encode(hdAlpha, options: EncodeOptions()), small),
        ]
        for (name, data, iterations) in cases {
            let isPNG = name.hasPrefix("PNG")
            var oursSamples: [Double] = []
            var cSamples: [Double] = []
            var pixels = 0
            for iteration in 0...iterations {  // iteration 0 is a warm-up
                var cTime = 0.0, oursTime = 0.0
                for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                    let t0 = cpuNow()
                    if side == 0 {
                        try decodeWithC(data, png: isPNG)
                        cTime = cpuNow() - t0
                    } else {
                        let image = try ImageDecoder.decode(data)
                        oursTime = cpuNow() - t0
                        pixels = image.width * image.height
                    }
                }
                if iteration > 0 {
                    cSamples.append(cTime)
                    oursSamples.append(oursTime)
                }
            }
            let ours = Double(pixels) / 1e6 / median(oursSamples)
            let peer = Double(pixels) / 1e6 / median(cSamples)
            BenchReport.shared.add(BenchResult(
                suite: Self.name, name: name, unit: "Mpx/s", ours: ours, peer: peer,
                peerName: isPNG ? "C harness (libpng direct, premultiplied)" : "C harness (libjpeg-turbo direct)",
                higherIsBetter: true, goal: "≤ 1.05× C time", goalMet: peer / ours <= 1.05))
        }
    }

    private static func cpuNow() -> Double { Double(bench_thread_cpu_ns()) / 1e9 }

    private static func median(_ samples: [Double]) -> Double {
        let sorted = samples.sorted()
        return sorted[sorted.count / 2]
    }

    private static func decodeWithC(_ data: Data, png: Bool) throws {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: UInt32 = 0
        var height: UInt32 = 0
        let status = data.withUnsafeBytes { raw -> Int32 in
            let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return png ? bench_png_decode_rgba(base, raw.count, 1, &pixels, &width, &height)
                : bench_jpeg_decode_rgba(base, raw.count, &pixels, &width, &height)
        }
        free(pixels)
        guard status == 0 else { throw BenchFailure("C harness decode failed") }
    }

    /// A smooth photo-like pattern with fine detail (so the codecs do real work), straight alpha.
    private static func pattern(width: Int, height: Int, alpha: Bool) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        bytes.withUnsafeMutableBufferPointer { b in
            for y in 0..<height {
                let fy = Double(y) / Double(height)
                for x in 0..<width {
                    let o = (y * width + x) * 4
                    let fx = Double(x) / Double(width)
                    let detail = Double((x &* 7919 ^ y &* 104_729) & 15) - 7.5
                    b[o] = UInt8(clamping: Int(127.5 + 110 * sin(fx * 9 + fy * 3) + detail))
                    b[o + 1] = UInt8(clamping: Int(255 * fy * 0.9 + detail))
                    b[o + 2] = UInt8(clamping: Int(127.5 + 110 * cos(fx * fy * 12) - detail))
                    if alpha { b[o + 3] = UInt8(clamping: Int(255 * (0.5 + 0.5 * sin(fx * 5 + fy * 7)))) }
                }
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }
}

/// A benchmark setup failure.
