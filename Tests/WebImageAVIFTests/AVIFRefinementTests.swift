import Foundation
@testable import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// Automatic quality's AVIF re-encode (`AutomaticQuality.avifRefinementSpeed`): the search's speed-8 winner is
/// encoded once more by libaom at speed 5, a few quantizers coarser, and served only when it still reaches the target
/// in fewer bytes. Attacked here: the output must still score at or above the target (measured again, on every
/// background a transparent image is judged on), the re-encode must actually save bytes on real photographs, and
/// it must never be started when the deadline cannot hold it (a speed-5 encode cannot be interrupted).
final class AVIFRefinementTests: AVIFEncodingTestCase {
    private func encodeAVIF(_ buffer: PixelBuffer, _ options: EncodeOptions) throws -> Data {
        try AVIFEncoder().encode([ImageFrame(buffer: buffer)], format: .avif, loopCount: 0, options: options)
    }

    /// Six corpus photographs and graphics at 400 px: every output holds the target by a fresh score of the decoded
    /// file, and the re-encode is served on most of them, in fewer bytes than the search's own winner.
    func testRefinedWinnerKeepsTheTargetInFewerBytes() throws {
        let dir: URL
        do { dir = try Corpus.require().appendingPathComponent("photos") } catch { throw XCTSkip("\(error)") }
        let names = ["kodak_05.png", "kodak_23.png", "elementary_Morskie_Oko.jpg", "thumbor_800px-Katherine_Maher.jpg",
                     "chartjs_overlapping.png", "govips_govips_color.png"]
        let target = QualityTarget(minimumScore: 76)
        var refined = 0, bytes = 0, searchBytes = 0
        for name in names {
            let image = try ImageDecoder.decode(try Data(contentsOf: dir.appendingPathComponent(name)),
                                                options: DecodeOptions(firstFrameOnly: true, maxPixelSize: 400))
            let source = try image.orientation.upright(image.firstFrame.buffer)
            var speeds: [Int32?] = []
            let report = try AutomaticQuality.encode(source, format: .avif, target: target, options: EncodeOptions()) { buffer, options in
                speeds.append(options.avifSpeed)
                return try encodeAVIF(buffer, options)
            }
            XCTAssertFalse(report.usedFallback, name)
            XCTAssertEqual(speeds.filter { $0 != nil }.count, speeds.count - report.tries.count,
                           "\(name): every encode after the search is the re-encode at speed 5: \(speeds)")
            XCTAssertTrue(speeds.allSatisfy { $0 == nil || $0 == AutomaticQuality.avifRefinementSpeed }, "\(name): \(speeds)")
            // Decoded as the search decodes its candidates (the score it measured must be reproducible exactly), and
            // straight (un-premultiplied, as a viewer might), which differs from it only by rounding.
            let reference = try ScoringReference(source)
            let asSearched = try ImageDecoder.decode(report.data, options: DecodeOptions(firstFrameOnly: true)).firstFrame.buffer
            XCTAssertGreaterThanOrEqual(try reference.score(asSearched), target.minimumScore, "\(name) at q\(report.quality)")
            let straight = try ImageDecoder.decode(report.data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
            XCTAssertGreaterThanOrEqual(try reference.score(straight), target.minimumScore - 0.05, "\(name) at q\(report.quality), straight")
            // The search's winner as it was written (speed 8, the effort's options).
            let winner = try XCTUnwrap(report.tries.filter { $0.score >= target.minimumScore }.map(\.level).min(), name)
            let winnerData = try encodeAVIF(source, EncodeOptions(quality: AutomaticQuality.Grid.of(.avif).quality(winner)))
            if report.refinedSpeed != nil {
                refined += 1
                XCTAssertLessThan(report.data.count, winnerData.count, name)
                XCTAssertLessThan(report.encodedQuality, AutomaticQuality.Grid.of(.avif).quality(winner), name)
            } else {
                XCTAssertEqual(report.data, winnerData, "\(name): no re-encode served, so the search's winner is")
            }
            bytes += report.data.count
            searchBytes += winnerData.count
            print("AVIF q=auto:76 \(name): \(report.data.count) B (search's winner \(winnerData.count) B), refined \(report.refinedSpeed.map(String.init) ?? "no")")
        }
        print("AVIF q=auto:76 over \(names.count) files: \(bytes) B, the search's winners \(searchBytes) B, \(refined) refined")
        XCTAssertGreaterThanOrEqual(refined, names.count - 2, "speed 5 reaches the target coarser on most files")
        XCTAssertLessThan(Double(bytes), 0.95 * Double(searchBytes))
    }

    /// The encoder is slowed (each speed-8 try sleeps, so its measured time is long) and the deadline leaves less
    /// than `avifRefinementCostRatio` of those tries after the search: no speed-5 encode is started and the search's
    /// winner is served, not a deadline error. Without the deadline the same slow encoder is refined.
    func testNoReEncodeWhenTheDeadlineCannotHoldIt() throws {
        let source = try SoftShadow.image(width: 160, height: 120)
        let pause = 0.4
        for withDeadline in [true, false] {
            var options = EncodeOptions()
            if withDeadline { options.deadline = ContinuousClock.now + .seconds(6) }
            var speeds: [Int32?] = []
            let report = try AutomaticQuality.encode(source, format: .avif, target: .medium, options: options) { buffer, options in
                speeds.append(options.avifSpeed)
                if options.avifSpeed == nil { Thread.sleep(forTimeInterval: pause) }
                return try encodeAVIF(buffer, options)
            }
            XCTAssertFalse(report.usedFallback)
            // At least 400 ms a try: the estimate is at least 16 × 0.4 = 6.4 s, and at least 2 tries (0.8 s) have
            // passed of the 6 s, so at most 5.2 s remain: not enough.
            XCTAssertGreaterThanOrEqual(report.tries.count, 2)
            if withDeadline {
                XCTAssertEqual(speeds.compactMap { $0 }, [], "no speed-5 encode may start: \(speeds)")
                XCTAssertNil(report.refinedSpeed)
            } else {
                XCTAssertFalse(speeds.compactMap { $0 }.isEmpty, "without a deadline the winner is re-encoded: \(speeds)")
            }
        }
    }
}
