import CBenchHarness
import Foundation
import ImageCodec
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

/// AVIF, JPEG XL and HEIC decode throughput through the optional codec modules (registered, through
/// `ImageDecoder.decode`) against libavif, libjxl and libheif called directly from C, same run, alternating.
///
/// Inputs are photos from the image corpus (`corpus/modern`, or `$WEBIMAGE_CORPUS/modern`): AVIF 8-bit 4:4:4
/// 1204×800 (link-u fox), JPEG XL VarDCT 1024×631 (conformance bicycles), HEIC 1440×960 (SDWebImage's
/// TestImage). Both sides decode single-threaded to premultiplied 8-bit RGBA in a fresh buffer. Times are
/// this process's CPU time (every thread of it: a decoder's worker threads count, other processes on a busy
/// machine do not), medians of alternating runs.
enum CodecModernBench: BenchSuite {
    static let name = "codec-modern"

    static func run(_ settings: BenchSettings) throws {
        AVIFCodec.register()
        JXLCodec.register()
        HEIFCodec.register()
        let modern = try corpus()
        let inputs: [(label: String, file: String, decode: (UnsafeRawBufferPointer) -> Int32, peer: String)] = [
            ("AVIF 1204×800 (8-bit 4:4:4) decode", "avif/linku__fox.profile1.8bpc.yuv444.avif",
             { bench_avif_decode($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }, "C harness (libavif + dav1d direct)"),
            ("JPEG XL 1024×631 decode", "jxl/conformance__bicycles.jxl",
             { bench_jxl_decode($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }, "C harness (libjxl direct)"),
            ("HEIC 1440×960 decode", "heic/sdwebimage__TestImage.heic",
             { bench_heif_decode($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }, "C harness (libheif + libde265 direct)"),
        ]
        let iterations = settings.quick ? 5 : 21
        for input in inputs {
            let data = try Data(contentsOf: modern.appendingPathComponent(input.file))
            let info = try ImageDecoder.info(data)
            let megapixels = Double(info.width * info.height) / 1e6
            let ours = {
                _ = try ImageDecoder.decode(data, options: DecodeOptions(keepsOriginalData: false))
            }
            let peer = {
                let status = data.withUnsafeBytes(input.decode)
                guard status == 0 else { throw BenchFailure("\(input.label): C harness failed: \(status)") }
            }
            let (oursTime, cTime) = try CodecGIFWebPBench.alternating(iterations: iterations, ours, peer, clock: processCPUSeconds)
            BenchReport.shared.add(BenchResult(suite: name, name: input.label, unit: "Mpx/s", ours: megapixels / oursTime,
                                               peer: megapixels / cTime, peerName: input.peer, higherIsBetter: true,
                                               goal: "≤ 1.05× C", goalMet: oursTime / cTime <= 1.05))
        }
    }

    /// `corpus/modern` from `$WEBIMAGE_CORPUS` or `../shared/corpus` (beside the repository).
    private static func corpus() throws -> URL {
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
        let candidates = [ProcessInfo.processInfo.environment["WEBIMAGE_CORPUS"].map { URL(fileURLWithPath: $0) },
                          root.appendingPathComponent("../shared/corpus").standardizedFileURL].compactMap { $0 }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.appendingPathComponent("modern/MANIFEST.tsv").path) }) else {
            throw BenchFailure("corpus/modern not found (set WEBIMAGE_CORPUS)")
        }
        return found.appendingPathComponent("modern")
    }

    /// CPU seconds used by this process so far (`CLOCK_PROCESS_CPUTIME_ID`).
    private static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
