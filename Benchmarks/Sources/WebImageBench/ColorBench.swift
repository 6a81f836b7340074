import CBenchHarness
import Foundation
import WebImage

/// Colour management (issue 30): a 12 Mpx JPEG tagged with Debian's Display P3 profile against the same bytes
/// untagged (the profile is the only difference: an APP2 segment spliced in), full size and as a 400 px
/// thumbnail; an sRGB-tagged copy and the untagged file with colour management off, which must cost nothing;
/// the transform's throughput from the difference and alone (ours, the matrix-shaper fast path, against Little CMS
/// from C); and `vipsthumbnail --export-profile srgb` on the tagged file. Times are the process's CPU time (all
/// threads), and for the tagged full decode, whose conversion is pipelined on a helper thread, wall time too.
enum ColorBench: BenchSuite {
    static let name = "color"
    static let displayP3 = "/usr/share/color/argyll/ref/DisplayP3.icm"
    static let sRGB = "/usr/share/color/icc/sRGB.icc"

    static func run(_ settings: BenchSettings) throws {
        guard let p3 = FileManager.default.contents(atPath: displayP3), let srgb = FileManager.default.contents(atPath: sRGB) else {
            print("  \(displayP3) or \(sRGB) missing (apt-get install argyll-ref icc-profiles-free): colour suite skipped")
            return
        }
        let count = settings.quick ? 5 : 15
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        encoder.addFrame(try ProcessingBench.syntheticPhoto(width: 4000, height: 3000))
        let untagged = try encoder.encode()
        let tagged = try withICCProfile(untagged, p3)
        let srgbTagged = try withICCProfile(untagged, srgb)
        let megapixels = 12.0

        let thumbnail = DecodeOptions(maxPixelSize: 400)
        var preserve = DecodeOptions()
        preserve.colorManagement = .preserve
        // Full decodes: wall time and the process's CPU time (getrusage, every thread). A tagged full decode
        // converts its colour band by band on a helper thread while libjpeg decodes the next band
        // (ColorBandPipeline), so its wall time drops but its CPU time does not: both are reported, the goal is
        // on wall time. Alternated, so both files see the same machine load.
        var untaggedSamples: [Timing] = [], taggedSamples: [Timing] = []
        _ = try? ImageDecoder.decode(untagged)
        _ = try? ImageDecoder.decode(tagged)
        for _ in 0..<count {
            untaggedSamples.append(timing { _ = try? ImageDecoder.decode(untagged) })
            taggedSamples.append(timing { _ = try? ImageDecoder.decode(tagged) })
        }
        let untaggedTiming = Timing.median(untaggedSamples), taggedTiming = Timing.median(taggedSamples)
        let untaggedFull = untaggedTiming.cpu, taggedFull = taggedTiming.cpu
        let untaggedThumb = cpuMedian(count * 4) { _ = try? ImageDecoder.decode(untagged, options: thumbnail) }
        let taggedThumb = cpuMedian(count * 4) { _ = try? ImageDecoder.decode(tagged, options: thumbnail) }
        let srgbFull = cpuMedian(count) { _ = try? ImageDecoder.decode(srgbTagged) }
        let untaggedOff = cpuMedian(count) { _ = try? ImageDecoder.decode(untagged, options: preserve) }

        BenchResult.colour("12 Mpx Display P3 JPEG, 400 px thumbnail vs the same file untagged", ours: taggedThumb,
                           peer: untaggedThumb, peerName: "untagged thumbnail", goal: "≤ 1.10×", limit: 1.10)
        BenchResult.colour("12 Mpx Display P3 JPEG, full decode vs the same file untagged (wall time)", ours: taggedTiming.wall,
                           peer: untaggedTiming.wall, peerName: "untagged full decode", goal: "≤ 1.30×", limit: 1.30)
        BenchReport.shared.add(BenchResult(
            suite: name, name: "12 Mpx Display P3 JPEG, full decode vs the same file untagged (process CPU time, all threads)",
            unit: "ms", ours: taggedFull * 1000, peer: untaggedFull * 1000, peerName: "untagged full decode",
            higherIsBetter: false, goal: nil, goalMet: nil))
        print(String(format: "  full decode wall %.1f / %.1f ms (%.2f×), CPU %.1f / %.1f ms (%.2f×)", taggedTiming.wall * 1000,
                     untaggedTiming.wall * 1000, taggedTiming.wall / untaggedTiming.wall, taggedFull * 1000,
                     untaggedFull * 1000, taggedFull / untaggedFull))
        BenchResult.colour("12 Mpx sRGB-tagged JPEG (no transform) vs untagged, full decode", ours: srgbFull,
                           peer: untaggedFull, peerName: "untagged full decode", goal: "≤ 1.01×", limit: 1.01)
        BenchResult.colour("12 Mpx untagged JPEG, colour management on (default) vs off (.preserve)", ours: untaggedFull,
                           peer: untaggedOff, peerName: "decode with .preserve", goal: "≤ 1.01×", limit: 1.01)
        // Broken colour data is ignored, never fatal, and never costs much: garbage bytes where a profile should
        // be, a profile cut in half, a grey profile on RGB pixels.
        var cut = p3.prefix(p3.count / 2)
        cut.replaceSubrange(cut.startIndex..<cut.startIndex + 4, with: [0, 0, 0x0B, 0x78]) // its header still says 2936 bytes
        let broken: [(String, Data)] = [
            ("garbage bytes", Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })),
            ("a Display P3 profile cut in half", Data(cut)),
            ("a grey profile on RGB pixels", FileManager.default.contents(atPath: "/usr/share/color/icc/Gray.icc") ?? Data()),
        ]
        for (what, profile) in broken where !profile.isEmpty {
            let file = try withICCProfile(untagged, profile)
            let time = cpuMedian(count) { _ = try? ImageDecoder.decode(file) }
            BenchReport.shared.add(BenchResult(
                suite: name, name: "12 Mpx JPEG with a broken profile (\(what)), full decode", unit: "ms",
                ours: time * 1000, peer: untaggedFull * 1000, peerName: "untagged full decode", higherIsBetter: false,
                goal: "≤ 1.5× + 50 ms", goalMet: time <= untaggedFull * 1.5 + 0.050))
        }
        // The floor: Little CMS alone, from C, on the same 12 Mpx with the same flags. A tagged decode cannot cost
        // less than the untagged decode plus this (the transform is what the profile adds).
        let pixelCount = 4000 * 3000
        var lcmsSamples: [Double] = []
        var pixels = [UInt8](repeating: 0, count: pixelCount * 4)
        for (index, _) in pixels.enumerated() { pixels[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 24) }
        for _ in 0..<max(3, count / 3) {
            let nanoseconds = p3.withUnsafeBytes { profile in
                pixels.withUnsafeMutableBufferPointer { buffer in
                    bench_lcms_transform_rgba8(profile.baseAddress!.assumingMemoryBound(to: UInt8.self), profile.count,
                                               buffer.baseAddress!, pixelCount)
                }
            }
            if nanoseconds > 0 { lcmsSamples.append(Double(nanoseconds) / 1e9) }
        }
        lcmsSamples.sort()
        // Our transform alone, through the public colour stage (the matrix-shaper fast path for this profile), on
        // the same 12 Mpx: what the tagged decode adds beyond reading the profile.
        let conversion = ColorConversion(colorSpace: ImageColorSpace(iccProfile: p3), management: .sRGB)
        var canvas = try PixelBuffer(width: 4000, height: 3000, pixelFormat: .rgba8)
        canvas.withUnsafeMutableBytes { bytes in
            for index in 0..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 24) }
        }
        let oursAlone = cpuMedian(max(3, count / 3)) { conversion.apply(to: &canvas) }
        // The alternative to the pipeline: convert after the decode, split in strips over the cores
        // (concurrentPerform). Its wall time is what it would add to the untagged decode.
        var strips = try (0..<2).map { _ in try PixelBuffer(width: 4000, height: 1500, pixelFormat: .rgba8) }
        for index in strips.indices {
            strips[index].withUnsafeMutableBytes { bytes in
                for i in 0..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: (i + index * bytes.count) &* 2_654_435_761 >> 24) }
            }
        }
        let boxes = strips.map(StripBox.init)
        let splitWall = Clock.median(iterations: max(3, count / 3)) {
            DispatchQueue.concurrentPerform(iterations: boxes.count) { index in boxes[index].convert(conversion) }
        }
        let wholeWall = Clock.median(iterations: max(3, count / 3)) { conversion.apply(to: &canvas) }
        print(String(format: "  transform of 12 Mpx after the decode: whole %.1f ms, two strips with concurrentPerform %.1f ms (wall)",
                     wholeWall * 1000, splitWall * 1000))
        BenchReport.shared.add(BenchResult(
            suite: name, name: "Colour transform of 12 Mpx after the decode, two strips with concurrentPerform vs one thread (wall time)",
            unit: "ms", ours: splitWall * 1000, peer: wholeWall * 1000, peerName: "one thread",
            higherIsBetter: false, goal: nil, goalMet: nil))
        let extra = max(taggedFull - untaggedFull, 1e-9)
        if let lcms = lcmsSamples.isEmpty ? nil : lcmsSamples[lcmsSamples.count / 2] {
            BenchReport.shared.add(BenchResult(
                suite: name, name: "12 Mpx Display P3 JPEG, full decode vs its floor (untagged decode + Little CMS alone)",
                unit: "ms", ours: taggedFull * 1000, peer: (untaggedFull + lcms) * 1000,
                peerName: "untagged decode + cmsDoTransform from C (same flags)", higherIsBetter: false,
                goal: nil, goalMet: nil))
            print(String(format: "  Little CMS alone from C: %.0f Mpx/s (%.1f ms); the tagged decode's extra time: %.1f ms (%.0f Mpx/s)",
                         megapixels / lcms, lcms * 1000, extra * 1000, megapixels / extra))
            BenchReport.shared.add(BenchResult(
                suite: name, name: "Colour transform throughput (Display P3 → sRGB, RGBA8): ours in the decode vs Little CMS alone from C",
                unit: "Mpx/s", ours: megapixels / extra, peer: megapixels / lcms, peerName: "cmsDoTransform from C",
                higherIsBetter: true, goal: nil, goalMet: nil))
            BenchReport.shared.add(BenchResult(
                suite: name, name: "Colour transform alone, 12 Mpx (Display P3 → sRGB, RGBA8): ours (ColorConversion.apply, matrix-shaper path) vs Little CMS from C",
                unit: "ms", ours: oursAlone * 1000, peer: lcms * 1000, peerName: "cmsDoTransform from C (same flags)",
                higherIsBetter: false, goal: nil, goalMet: nil))
            print(String(format: "  our transform alone: %.1f ms (%.0f Mpx/s)", oursAlone * 1000, megapixels / oursAlone))
        }

        guard let vips = ChildProcess.which("vipsthumbnail") else {
            print("  vipsthumbnail not found (apt-get install libvips-tools): comparison skipped")
            return
        }
        let input = settings.workDirectory.appendingPathComponent("p3-4000x3000.jpg")
        try tagged.write(to: input)
        let oursEncoded = cpuMedian(count * 4) {
            _ = try? ImageDecoder.decode(tagged, options: thumbnail).encoded(as: .jpeg, quality: 0.9)
        }
        let dir = settings.workDirectory.appendingPathComponent("vips-colour")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let files = try (0..<count).map { index -> String in
            let link = dir.appendingPathComponent("p\(index).jpg")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: input)
            return link.path
        }
        _ = try ChildProcess.run(vips, ["-s", "400", "--export-profile", "srgb", files[0], "-o", "%s_t.jpg"])
        let run = try ChildProcess.run(vips, ["-s", "400", "--export-profile", "srgb"] + files + ["-o", "%s_t.jpg"])
        BenchReport.shared.add(BenchResult(
            suite: name, name: "12 Mpx Display P3 JPEG → 400 px sRGB JPEG", unit: "ms/image", ours: oursEncoded * 1000,
            peer: run.cpuSeconds / Double(count) * 1000,
            peerName: "vipsthumbnail -s 400 --export-profile srgb (CPU time of one process over all files)",
            higherIsBetter: false, goal: nil, goalMet: nil))
    }

    /// `jpeg` with `profile` spliced in as one APP2 `ICC_PROFILE` segment right after SOI.
    static func withICCProfile(_ jpeg: Data, _ profile: Data) throws -> Data {
        guard profile.count <= 65_519, jpeg.count > 2 else { throw BenchFailure("profile too large for one APP2 segment") }
        var segment = Data([0xFF, 0xE2])
        let length = 2 + 12 + 2 + profile.count
        segment.append(contentsOf: [UInt8(length >> 8), UInt8(length & 0xFF)])
        segment.append(contentsOf: Array("ICC_PROFILE".utf8) + [0, 1, 1])
        segment.append(profile)
        return jpeg.prefix(2) + segment + jpeg.dropFirst(2)
    }

    /// Wall and process CPU seconds of one run.
    struct Timing {
        var wall: Double
        var cpu: Double

        /// The medians of each, taken separately.
        static func median(_ samples: [Timing]) -> Timing {
            let walls = samples.map(\.wall).sorted(), cpus = samples.map(\.cpu).sorted()
            return Timing(wall: walls[walls.count / 2], cpu: cpus[cpus.count / 2])
        }
    }

    /// Times one run of `body`: wall clock and the process's CPU time (all threads, getrusage).
    private static func timing(_ body: () -> Void) -> Timing {
        let (w0, c0) = (Clock.now(), Clock.processCPUTime())
        body()
        return Timing(wall: Clock.now() - w0, cpu: Clock.processCPUTime() - c0)
    }

    /// One strip, converted by one thread at a time.
    private final class StripBox: @unchecked Sendable {
        // @unchecked: concurrentPerform's iteration `index` touches box `index` only.
        private var buffer: PixelBuffer
        init(_ buffer: PixelBuffer) { self.buffer = buffer }
        func convert(_ conversion: ColorConversion) { conversion.apply(to: &buffer) }
    }

    /// Median CPU seconds of this process (every thread: a pipelined colour conversion runs on a helper) over
    /// `iterations` runs (robust to other processes on the machine).
    private static func cpuMedian(_ iterations: Int, _ body: () -> Void) -> Double {
        body()
        var samples: [Double] = []
        for _ in 0..<iterations {
            let t0 = Clock.processCPUTime()
            body()
            samples.append(Clock.processCPUTime() - t0)
        }
        samples.sort()
        return samples[samples.count / 2]
    }
}

private extension BenchResult {
    /// A ratio row of the colour suite: times in ms, goal met when `ours ≤ limit × peer`.
    static func colour(_ name: String, ours: Double, peer: Double, peerName: String, goal: String, limit: Double) {
        BenchReport.shared.add(BenchResult(suite: ColorBench.name, name: name, unit: "ms", ours: ours * 1000,
                                           peer: peer * 1000, peerName: peerName, higherIsBetter: false,
                                           goal: goal, goalMet: ours <= peer * limit))
    }
}
