import CBenchHarness
import Foundation
import WebImage

/// Thumbnails and incremental decoding (issue 4): 50 × a 4000×3000 JPEG → 400 px with a full decode + resize,
/// our downsampled decode (`DecodeOptions.maxPixelSize`) and `vipsthumbnail`, in the same run; peak memory of
/// each as a child process; and 1920×1080 progressive JPEG, baseline JPEG and interlaced PNG files fed to
/// `IncrementalDecoder` in 32 KB chunks.
enum ThumbnailBench: BenchSuite {
    static let name = "thumbnail"

    static func run(_ settings: BenchSettings) throws {
        let count = settings.quick ? 10 : 50
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        encoder.addFrame(try ProcessingBench.syntheticPhoto(width: 4000, height: 3000))
        let jpeg = try encoder.encode()
        let input = settings.workDirectory.appendingPathComponent("photo-4000x3000.jpg")
        try jpeg.write(to: input)

        // CPU time per image (this thread; robust to other processes on the machine), median of `count`:
        // full decode + Lanczos3 resize vs the downsampled decode.
        let full = try cpuMedian(count) { _ = try ImageDecoder.decode(jpeg).firstFrame.buffer.resized(maxPixelSize: 400) }
        let ours = try cpuMedian(count) { _ = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: 400)) }
        // Ours with the 400 px JPEG encoded too, to compare with vipsthumbnail (which writes its output).
        let oursEncoded = try cpuMedian(count) {
            _ = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: 400)).encoded(as: .jpeg, quality: 0.9)
        }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "\(count)× JPEG 4000×3000 → 400 px: downsampled decode", unit: "ms/image",
            ours: ours * 1000, peer: full * 1000, peerName: "full decode + Lanczos3 resize (ours)",
            higherIsBetter: false, goal: "≤ 0.2× full decode + resize", goalMet: ours <= full * 0.2))
        // The floor: libjpeg-turbo alone decoding at DCT scale 1/8 (what our downsampled path starts with),
        // called from C. Every coefficient is still entropy-decoded, so no JPEG thumbnail can cost less.
        let floor = try cpuMedian(count) {
            var pixels: UnsafeMutablePointer<UInt8>?
            var width: UInt32 = 0
            var height: UInt32 = 0
            let status = jpeg.withUnsafeBytes {
                bench_jpeg_decode_rgba_scaled($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count, 8,
                                              &pixels, &width, &height)
            }
            free(pixels)
            guard status == 0 else { throw BenchFailure("libjpeg scaled decode failed") }
        }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "\(count)× JPEG 4000×3000 → 400 px: downsampled decode vs its floor", unit: "ms/image",
            ours: ours * 1000, peer: floor * 1000, peerName: "libjpeg-turbo DCT 1/8 decode alone (C)",
            higherIsBetter: false, goal: nil, goalMet: nil))
        if let vips = try vipsThumbnail(input, count: count, settings: settings) {
            BenchReport.shared.add(BenchResult(
                suite: name, name: "\(count)× JPEG 4000×3000 → 400 px incl. JPEG encode", unit: "ms/image",
                ours: oursEncoded * 1000, peer: vips.seconds * 1000,
                peerName: "vipsthumbnail -s 400, CPU time of one process over all files (writes JPEG)", higherIsBetter: false,
                goal: "≤ 1.5× vipsthumbnail", goalMet: oursEncoded <= vips.seconds * 1.5))
            print(String(format: "  vipsthumbnail peak RSS %.1f MB", Double(vips.peakRSS) / 1e6))
        } else {
            print("  vipsthumbnail not found (apt-get install libvips-tools): comparison skipped")
        }

        try memory(input, settings: settings)
        try incremental(settings)
    }

    /// Peak RSS of a child `webimage convert` doing a full decode vs a `--thumbnail 400` decode, each above
    /// the RSS of a child that decodes a 16×16 image (the process baseline: runtime, Foundation, libraries).
    private static func memory(_ input: URL, settings: BenchSettings) throws {
        guard let cli = ChildProcess.webimageBinary() else {
            print("  webimage binary not built (swift build -c release --product webimage): memory skipped")
            return
        }
        var tiny = ImageEncoder(format: .jpeg)
        tiny.addFrame(try ProcessingBench.syntheticPhoto(width: 16, height: 16))
        let tinyURL = settings.workDirectory.appendingPathComponent("tiny.jpg")
        try tiny.encode().write(to: tinyURL)
        let out = settings.workDirectory.appendingPathComponent("out.jpg").path
        let baseline = try ChildProcess.run(cli, ["convert", tinyURL.path, out]).peakRSS
        let fullRSS = try ChildProcess.run(cli, ["convert", input.path, out]).peakRSS
        let thumbRSS = try ChildProcess.run(cli, ["convert", input.path, out, "--thumbnail", "400"]).peakRSS
        let fullAbove = Double(max(fullRSS - baseline, 1)) / 1e6
        let thumbAbove = Double(max(thumbRSS - baseline, 1)) / 1e6
        print(String(format: "  peak RSS: baseline %.1f MB, full decode %.1f MB, thumbnail %.1f MB",
                     Double(baseline) / 1e6, Double(fullRSS) / 1e6, Double(thumbRSS) / 1e6))
        BenchReport.shared.add(BenchResult(
            suite: name, name: "peak memory above process baseline, 4000×3000 → 400 px", unit: "MB",
            ours: thumbAbove, peer: fullAbove, peerName: "full decode (webimage convert, child process)",
            higherIsBetter: false, goal: "≤ 0.1× full decode", goalMet: thumbAbove <= fullAbove * 0.1))
    }

    /// 1920×1080 images fed to `IncrementalDecoder` in 32 KB chunks, asking for an image after each, vs one
    /// decode: a progressive JPEG (buffered-image scans), a baseline JPEG (rows read once as they arrive) and an
    /// Adam7 PNG (libpng's progressive reader, a coarse full image after each pass).
    private static func incremental(_ settings: BenchSettings) throws {
        let photo = try ProcessingBench.syntheticPhoto(width: 1920, height: 1080)
        var progressive = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9, isProgressive: true))
        progressive.addFrame(photo)
        try chunked(try progressive.encode(), label: "progressive JPEG 1920×1080", hasGoal: true, settings)
        var baseline = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        baseline.addFrame(photo)
        try chunked(try baseline.encode(), label: "baseline JPEG 1920×1080", hasGoal: false, settings)
        var png = ImageEncoder(format: .png, options: EncodeOptions(isProgressive: true))
        png.addFrame(photo)
        try chunked(try png.encode(), label: "interlaced PNG 1920×1080", hasGoal: false, settings)
    }

    /// Feeds `data` in 32 KB chunks with a `makeImage()` after each; records the median CPU time against a
    /// one-shot decode of the same bytes. The goal (≤ 2× one-shot) is for the progressive JPEG; the
    /// other rows show the same measure for the other streams.
    private static func chunked(_ data: Data, label: String, hasGoal: Bool, _ settings: BenchSettings) throws {
        let iterations = settings.quick ? 3 : 11
        let oneShot = try cpuMedian(iterations) { _ = try ImageDecoder.decode(data) }
        var partials = 0
        let chunked = try cpuMedian(iterations) {
            let decoder = IncrementalDecoder()
            var offset = 0
            var last: Image?
            partials = 0
            while offset < data.count {
                let end = min(data.count, offset + 32 * 1024)
                try decoder.update(data.subdata(in: offset..<end), isFinal: false)
                offset = end
                if let image = try decoder.makeImage(), image !== last { partials += 1; last = image }
            }
            try decoder.update(Data(), isFinal: true)
            _ = try decoder.makeImage()
        }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "\(label) (\(data.count / 1024) KB) in 32 KB chunks, \(partials) partials",
            unit: "ms", ours: chunked * 1000, peer: oneShot * 1000, peerName: "one-shot decode (ours)",
            higherIsBetter: false, goal: hasGoal ? "≤ 2× one-shot" : nil, goalMet: hasGoal ? chunked <= oneShot * 2 : nil))
    }

    /// Median thread CPU seconds of `body` over `iterations` runs after one warm-up.
    private static func cpuMedian(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
        try body()
        var samples: [Double] = []
        for _ in 0..<iterations {
            let t0 = bench_thread_cpu_ns()
            try body()
            samples.append(Double(bench_thread_cpu_ns() - t0) / 1e9)
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    /// `vipsthumbnail -s 400` over `count` links to the same file in one process: CPU seconds per image
    /// (user + system, so its worker threads count) and peak RSS.
    private static func vipsThumbnail(_ input: URL, count: Int, settings: BenchSettings) throws -> (seconds: Double, peakRSS: Int)? {
        guard let vips = ChildProcess.which("vipsthumbnail") else { return nil }
        let dir = settings.workDirectory.appendingPathComponent("vips")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var files: [String] = []
        for i in 0..<count {
            let link = dir.appendingPathComponent("p\(i).jpg")
            if !FileManager.default.fileExists(atPath: link.path) {
                try FileManager.default.createSymbolicLink(at: link, withDestinationURL: input)
            }
            files.append(link.path)
        }
        _ = try ChildProcess.run(vips, ["-s", "400", files[0], "-o", "%s_t.jpg"])  // warm the page cache
        let run = try ChildProcess.run(vips, ["-s", "400"] + files + ["-o", "%s_t.jpg"])
        return (run.cpuSeconds / Double(count), run.peakRSS)
    }
}
