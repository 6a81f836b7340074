import Foundation
import WebImage

/// Smart crop: what choosing the window costs on top of a render. For corpus photographs (`corpus/photos`, JPEG,
/// kind `photo`; a synthetic photo when the corpus is absent), the render `webimage-server` does for a narrow
/// `cover` (400 × 800 of a landscape photo, 800 × 400 of a portrait one): downsampled decode, orientation, crop,
/// resize, JPEG encode. Centre crop against `gravity=smart` (attention) and `gravity=entropy`, in the same run,
/// and the window choice alone.
enum SmartCropBench: BenchSuite {
    static let name = "smartcrop"

    static func run(_ settings: BenchSettings) throws {
        let iterations = settings.quick ? 3 : 9
        let inputs = try photos(limit: settings.quick ? 3 : 8)
        var totals: [String: Double] = [:]
        var windowTimes: [String: [Double]] = [:]
        for (label, data) in inputs {
            let info = try ImageDecoder.info(data)
            let (w, h) = info.orientation.swapsDimensions ? (info.height, info.width) : (info.width, info.height)
            let (outW, outH) = w >= h ? (400, 800) : (800, 400)
            let scale = max(Double(outW) / Double(w), Double(outH) / Double(h))
            let maxPixelSize = scale < 1 ? Int((Double(max(w, h)) * scale).rounded(.up)) : nil
            for (strategyName, strategy) in [("centre", CropWindowStrategy.fractions(x: 0.5, y: 0.5)), ("smart", .attention), ("entropy", .entropy)] {
                let t = try Clock.median(iterations: iterations) {
                    _ = try render(data, maxPixelSize: maxPixelSize, output: (outW, outH), scale: scale, strategy: strategy)
                }
                totals[strategyName, default: 0] += t
                // The window choice alone, on the decoded, oriented frame.
                let image = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true, keepsOriginalData: false,
                                                                                 maxPixelSize: maxPixelSize))
                let frame = try image.firstFrame.buffer.applyingOrientation(image.orientation)
                let crop = cropSize(frame, output: (outW, outH))
                let choose = try Clock.median(iterations: iterations) {
                    _ = frame.cropWindow(width: crop.width, height: crop.height, strategy: strategy)
                }
                windowTimes[strategyName, default: []].append(choose)
                print("  \(label) \(strategyName): " + String(format: "render %.1f ms, window %.2f ms", t * 1000, choose * 1000))
            }
        }
        let centre = totals["centre"] ?? 0
        for strategyName in ["smart", "entropy"] {
            let total = totals[strategyName] ?? 0
            BenchReport.shared.add(BenchResult(
                suite: name, name: "cover 400×800 render with gravity=\(strategyName) (\(inputs.count) photos, total)", unit: "ms",
                ours: total * 1000, peer: centre * 1000, peerName: "the same render, centre crop", higherIsBetter: false,
                goal: "≤ 1.3× centre", goalMet: total <= centre * 1.3))
            let times = windowTimes[strategyName] ?? []
            let worst = times.max() ?? 0
            BenchReport.shared.add(BenchResult(
                suite: name, name: "choosing the \(strategyName) window on the decoded frame (slowest photo)", unit: "ms",
                ours: worst * 1000, peer: nil, peerName: nil, higherIsBetter: false, goal: "≤ 5 ms", goalMet: worst * 1000 <= 5))
        }
    }

    /// The server's render of one `cover` output (ImageService.shape), with the window placed by `strategy`.
    static func render(_ data: Data, maxPixelSize: Int?, output: (Int, Int), scale: Double,
                       strategy: CropWindowStrategy) throws -> Data {
        let image = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true, keepsOriginalData: false,
                                                                         maxPixelSize: maxPixelSize))
        var frame = try image.firstFrame.buffer.applyingOrientation(image.orientation)
        let crop = cropSize(frame, output: output)
        let origin = frame.cropWindow(width: crop.width, height: crop.height, strategy: strategy)
        frame = try frame.cropped(x: origin.x, y: origin.y, width: crop.width, height: crop.height)
        frame = try frame.resized(width: output.0, height: output.1)
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.85))
        encoder.addFrame(frame)
        return try encoder.encode()
    }

    /// The part of `frame` that scales to `output` under `cover`.
    static func cropSize(_ frame: PixelBuffer, output: (Int, Int)) -> (width: Int, height: Int) {
        let s = max(Double(output.0) / Double(frame.width), Double(output.1) / Double(frame.height))
        return (min(frame.width, max(1, Int((Double(output.0) / s).rounded()))),
                min(frame.height, max(1, Int((Double(output.1) / s).rounded()))))
    }

    /// Up to `limit` JPEG photographs of the corpus, or one synthetic 4000 × 3000 JPEG when it is absent.
    static func photos(limit: Int) throws -> [(String, Data)] {
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
        let candidates = [ProcessInfo.processInfo.environment["WEBIMAGE_CORPUS"].map { URL(fileURLWithPath: $0) },
                          root.appendingPathComponent("../shared/corpus").standardizedFileURL].compactMap { $0 }
        if let corpus = candidates.first(where: { FileManager.default.fileExists(atPath: $0.appendingPathComponent("photos/MANIFEST.tsv").path) }) {
            let folder = corpus.appendingPathComponent("photos")
            let rows = try String(contentsOf: folder.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
                .split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            if let header = rows.first, let path = header.firstIndex(of: "path"), let kind = header.firstIndex(of: "kind"),
               let format = header.firstIndex(of: "format") {
                let chosen = rows.dropFirst().filter { $0.count > max(path, kind, format) && $0[kind] == "photo" && $0[format] == "JPEG" }
                    .prefix(limit)
                let loaded = try chosen.map { ($0[path], try Data(contentsOf: folder.appendingPathComponent($0[path]))) }
                if !loaded.isEmpty { return loaded }
            }
        }
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        encoder.addFrame(try ProcessingBench.syntheticPhoto(width: 4000, height: 3000))
        return [("synthetic 4000×3000", try encoder.encode())]
    }
}
