import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Compares our composited GIF frames with ImageMagick's `-coalesce` output.
final class GIFReferencePixelTests: XCTestCase {
    func testFramesMatchImageMagickCoalesce() throws {
        guard ReferenceDecoder.path(of: "convert") != nil else { throw XCTSkip("ImageMagick convert is not installed") }
        let entries = try GIFWebPCorpus.entries(format: "gif").filter(\.isExpectedOK)
        let names = ProcessInfo.processInfo.environment["GIF_REFERENCE_ALL"] != nil
            ? Set(entries.map { $0.url.lastPathComponent }) : Self.selected
        var compared = 0
        for entry in entries where names.contains(entry.url.lastPathComponent) {
            guard let reference = try ReferenceDecoder.imageMagickFrames(entry.url) else { continue }
            let image = try ImageDecoder.decode(Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8))
            XCTAssertEqual(reference.count, image.frameCount, entry.path)
            // Backwards first, so lazy random access is what is compared.
            for index in (0..<min(reference.count, image.frameCount)).reversed() {
                let frame = try image.frame(at: index).buffer
                guard reference[index].width == frame.width, reference[index].height == frame.height else {
                    XCTFail("\(entry.path) frame \(index): size \(reference[index].width)×\(reference[index].height)")
                    continue
                }
                let diff = GIFWebPCorpus.maxDifference(frame, reference[index])
                XCTAssertEqual(diff, 0, "\(entry.path) frame \(index)")
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 20)
    }

    /// Files covering interlace, local tables, transparency and all disposals, on which browsers and
    /// ImageMagick agree.
    static let selected: Set<String> = [
        "giflib_treescap-interlaced.gif", "giflib_treescap.gif", "giflib_porsche.gif", "giflib_fire.gif",
        "imagers_mixed-disposal.gif", "pillow_dispose_bgnd.gif", "pillow_dispose_none.gif", "pillow_dispose_prev.gif",
        "vips_dispose-previous.gif", "vips_dispose-background.gif", "kingfisher_dancing-banana.gif",
        "pillow_iss634.gif", "wuffs_animated-red-blue.gif", "imagegif_interlaced.gif", "pillow_transparent.gif",
        "wuffs_muybridge.gif", "sdweb_TestImage.gif",
    ]
}
