import Foundation
@testable import ImageCodec
import TestSupport
import WebImageJXL
import XCTest

/// Automatic quality for JPEG XL on a seventh of the shared corpus at 400 px: its own quality curve carries the
/// predictor near the answer, every output reaches the target (by our SSIMULACRA2) without the fallback, and the
/// quarter-quality grid (`AutomaticQuality.Grid.of(.jpegXL)`) lands nearer the target than whole qualities do with
/// the same tries and tolerance, in no more bytes. First run (13 files, a fifth): median excess 0.31 against
/// 0.51 points, 175,234 against 175,679 B — the search's bracket fix (`QualitySearch`) took most of what the
/// finer grid gained at whole qualities too.
final class JXLAutomaticQualityTests: XCTestCase {
    func testQuarterQualitiesLandNearerTheTarget() throws {
        let registrations = JXLCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        let dir: URL
        do { dir = try Corpus.require().appendingPathComponent("photos") } catch { throw XCTSkip("\(error)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
        let sample = names.enumerated().filter { $0.offset % 7 == 2 }.map(\.element)
        XCTAssertGreaterThan(sample.count, 8)
        let target = QualityTarget(minimumScore: 76)
        let grids = [("quarter", AutomaticQuality.Grid.of(.jpegXL)), ("whole", AutomaticQuality.Grid(levels: 100))]
        var bytes: [String: Int] = [:], excess: [String: [Double]] = [:]
        var startError = 0
        for name in sample {
            let image = try ImageDecoder.decode(try Data(contentsOf: dir.appendingPathComponent(name)),
                                                options: DecodeOptions(firstFrameOnly: true, maxPixelSize: 400))
            let source = try OpaqueComposite.onMidGrey(try image.orientation.upright(image.firstFrame.buffer))
            for (label, grid) in grids {
                let report = try AutomaticQuality.encode(source, format: .jpegXL, target: target, options: EncodeOptions(),
                                                         grid: grid) { buffer, options in
                    try JXLEncoder().encode([ImageFrame(buffer: buffer)], format: .jpegXL, loopCount: 0, options: options)
                }
                XCTAssertFalse(report.usedFallback, "\(name) \(label)")
                XCTAssertLessThanOrEqual(report.tries.count, AutomaticQuality.maximumScoredTries(for: .jpegXL), "\(name) \(label)")
                XCTAssertTrue(report.tries.allSatisfy { (1...grid.levels).contains($0.level) }, "\(name) \(label)")
                let decoded = try ImageDecoder.decode(report.data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
                let score = try SSIMULACRA2.score(reference: source, distorted: decoded)
                XCTAssertGreaterThanOrEqual(score, target.minimumScore - 0.01, "\(name) \(label) at \(report.encodedQuality)")
                bytes[label, default: 0] += report.data.count
                excess[label, default: []].append(score - target.minimumScore)
                if label == "quarter" { startError += abs(report.predictedQuality - report.quality) }
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let meanStartError = Double(startError) / Double(sample.count)
        print("JPEG XL q=auto:76 over \(sample.count) files: bytes \(bytes), median excess quarter \(median(excess["quarter"]!)) whole \(median(excess["whole"]!)), start \(meanStartError) qualities off")
        XCTAssertLessThan(median(excess["quarter"]!), median(excess["whole"]!), "quarter qualities land nearer the target")
        XCTAssertLessThanOrEqual(Double(bytes["quarter"]!), 1.005 * Double(bytes["whole"]!), "and write no more bytes")
        XCTAssertLessThanOrEqual(meanStartError, 10, "JPEG XL's own curve starts the search near the answer")
    }
}
