import Foundation
import WebImage

/// Automatic quality's cost: for every photograph of `corpus/photos` as a 400 px thumbnail, the time of an encode
/// with `EncodeOptions(automaticQuality: .medium)` (its tries, decodes and SSIMULACRA2) and with `.medium` unscored
/// (`check: .predicted`: the predictor's quality, one encode) against one fixed-quality encode (q80) of the same
/// pixels, JPEG and WebP; and SSIMULACRA2 alone on the same sizes: a reference and one comparison, and one more
/// comparison against a prepared reference (the floor of any scored check). Totals over the set, in the thread's CPU
/// time (every step is single-threaded; wall-clock rows swung by 20–30 % on a shared machine).
enum QualityBench: BenchSuite {
    static let name = "quality"

    static func run(_ settings: BenchSettings) throws {
        let directory = try corpus()
        var names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
        if settings.quick { names = Array(names.prefix(12)) }
        var thumbnails: [PixelBuffer] = []
        for name in names {
            let image = try ImageDecoder.decode(try Data(contentsOf: directory.appendingPathComponent(name)),
                                                options: DecodeOptions(firstFrameOnly: true, maxPixelSize: 400))
            thumbnails.append(try image.orientation.upright(image.firstFrame.buffer))
        }
        let iterations = settings.quick ? 1 : 3
        for format in [ImageFormat.jpeg, .webp] {
            func encodeAll(_ options: EncodeOptions) throws -> Int {
                var bytes = 0
                for buffer in thumbnails {
                    var encoder = ImageEncoder(format: format, options: options)
                    encoder.addFrame(buffer)
                    bytes += try encoder.encode().count
                }
                return bytes
            }
            var fixedBytes = 0, autoBytes = 0, predictedBytes = 0
            let fixed = try Clock.medianThreadCPU(iterations: iterations) { fixedBytes = try encodeAll(EncodeOptions(quality: 0.8)) }
            let automatic = try Clock.medianThreadCPU(iterations: iterations) {
                autoBytes = try encodeAll(EncodeOptions(automaticQuality: .medium))
            }
            let predicted = try Clock.medianThreadCPU(iterations: iterations) {
                predictedBytes = try encodeAll(EncodeOptions(automaticQuality: QualityTarget.medium.checked(.predicted)))
            }
            BenchReport.shared.add(BenchResult(
                suite: name, name: "q=auto \(format) encode of \(thumbnails.count) photos at 400 px (\(autoBytes) B; q80 \(fixedBytes) B)",
                unit: "ms", ours: automatic * 1000, peer: fixed * 1000, peerName: "one fixed-quality (q80) encode each",
                higherIsBetter: false, goal: "≤ 2× fixed", goalMet: automatic <= fixed * 2))
            BenchReport.shared.add(BenchResult(
                suite: name, name: "q=auto:predicted \(format) encode of \(thumbnails.count) photos at 400 px (\(predictedBytes) B, unscored)",
                unit: "ms", ours: predicted * 1000, peer: fixed * 1000, peerName: "one fixed-quality (q80) encode each",
                higherIsBetter: false, goal: "≤ 2× fixed", goalMet: predicted <= fixed * 2))
        }
        // Encoder effort: each setting's fixed-quality (q80) encode time and bytes against the settings before the
        // tuning (Annex K tables, method 4), at 400 px. The goal is on JPEG's default (`.balanced`, Robidoux tables):
        // within 1.5× of the old encode time. Bytes at equal SSIMULACRA2 are docs/quality.md's ("Tuned encoders").
        for format in [ImageFormat.jpeg, .webp] {
            func encodeAll(_ options: EncodeOptions) throws -> Int {
                var bytes = 0
                for buffer in thumbnails {
                    var encoder = ImageEncoder(format: format, options: options)
                    encoder.addFrame(buffer)
                    bytes += try encoder.encode().count
                }
                return bytes
            }
            var oldBytes = 0
            let old = try Clock.medianThreadCPU(iterations: iterations) {
                oldBytes = try encodeAll(EncodeOptions(quality: 0.8, jpegQuantization: .annexK))
            }
            for effort in EncodeEffort.allCases {
                var bytes = 0
                let time = try Clock.medianThreadCPU(iterations: iterations) { bytes = try encodeAll(EncodeOptions(quality: 0.8, effort: effort)) }
                let isDefault = effort == .balanced && format == .jpeg
                BenchReport.shared.add(BenchResult(
                    suite: name, name: "\(format) q80 effort \(effort) of \(thumbnails.count) photos at 400 px (\(bytes) B; before \(oldBytes) B)",
                    unit: "ms", ours: time * 1000, peer: old * 1000, peerName: "Annex K tables, method 4 (before)",
                    higherIsBetter: false, goal: isDefault ? "≤ 1.5× before" : nil, goalMet: isDefault ? time <= old * 1.5 : nil))
            }
        }
        let metric = try Clock.medianThreadCPU(iterations: iterations) {
            for buffer in thumbnails { _ = try SSIMULACRA2.score(reference: buffer, distorted: buffer) }
        }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "SSIMULACRA2 of \(thumbnails.count) photos at 400 px (reference and comparison)", unit: "ms",
            ours: metric * 1000, peer: nil, peerName: nil, higherIsBetter: false, goal: nil, goalMet: nil))
        let references = thumbnails.map { SSIMULACRA2.Reference($0) }
        let comparison = try Clock.medianThreadCPU(iterations: iterations) {
            for (reference, buffer) in zip(references, thumbnails) { _ = try reference.score(buffer) }
        }
        BenchReport.shared.add(BenchResult(
            suite: name, name: "SSIMULACRA2 of \(thumbnails.count) photos at 400 px (one comparison, reference prepared)", unit: "ms",
            ours: comparison * 1000, peer: nil, peerName: nil, higherIsBetter: false, goal: nil, goalMet: nil))
    }

    /// `corpus/photos` from `$WEBIMAGE_CORPUS` or `../shared/corpus` (beside the repository).
    static func corpus() throws -> URL {
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
        let candidates = [ProcessInfo.processInfo.environment["WEBIMAGE_CORPUS"].map { URL(fileURLWithPath: $0) },
                          root.appendingPathComponent("../shared/corpus").standardizedFileURL].compactMap { $0 }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.appendingPathComponent("photos").path) }) else {
            throw BenchFailure("corpus/photos not found (set WEBIMAGE_CORPUS)")
        }
        return found.appendingPathComponent("photos")
    }
}
