import Foundation
import ImageCodec
import TestSupport
import WebImage
import XCTest

/// Accounting of a PNG shrunk on load (`DecodeOptions.resizesToFit` false: what the server asks for a `cover`):
/// the block averages, their copy in the requested format and the rows, against the resident memory the decode
/// really takes (peak `VmHWM` growth), for an 8-bit opaque PNG, a 16-bit PNG with alpha and a Display P3 profile
/// (converted through straight RGBA, with a 16-bit row) and a grey one. And the decode never holds the full size.
final class PNGShrinkOnLoadBudgetTests: XCTestCase {
    static let displayP3 = "/usr/share/color/argyll/ref/DisplayP3.icm"
    /// What a decode allocates besides its bitmaps (libpng's rows and zlib state, page rounding).
    static let overhead = 2 << 20

    override func setUp() {
        ResidentMemory.mapLargeBlocks()
    }

    /// A `width` × `height` PNG made by ImageMagick from `arguments` (its colour options), written as `type`.
    private func png(width: Int, height: Int, _ arguments: [String], type: String) throws -> Data {
        guard ReferenceDecoder.path(of: "convert") != nil else { throw XCTSkip("ImageMagick is not installed (make test-deps)") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-shrink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("source.png")
        _ = try ReferenceDecoder.run("convert", ["-size", "\(width)x\(height)", "gradient:red-blue"] + arguments + ["\(type):" + out.path])
        return try Data(contentsOf: out)
    }

    /// `warmUp`: a small image of the same colour tags, decoded first, so the colour transform cache (process-wide,
    /// bounded on its own, ~1 MB of Little CMS tables for a profile's first transform) is not counted as the decode's.
    private func assertAccounted(_ data: Data, width: Int, height: Int, maxPixelSize: Int, _ what: String,
                                 warmUp: Data? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let options = DecodeOptions(maxPixelSize: maxPixelSize, resizesToFit: false)
        if let warmUp { _ = try ImageDecoder.decode(warmUp, options: DecodeOptions(maxPixelSize: 8, resizesToFit: false)) }
        let factor = PNGDecoder.shrinkOnLoadFactor(width: width, height: height, maxPixelSize: maxPixelSize)
        XCTAssertGreaterThan(factor, 1, "\(what): the source shrinks on load", file: file, line: line)
        let estimate = DecodeBudget.estimatedCost(of: data, options: options)
        let (result, growth) = ResidentMemory.measuringPeakGrowth { Result { try ImageDecoder.decode(data, options: options) } }
        guard let growth else { throw XCTSkip("/proc/self/clear_refs is not writable here: no peak to measure") }
        let image = try result.get()
        XCTAssertEqual([image.width, image.height], [(width + factor - 1) / factor, (height + factor - 1) / factor],
                       "\(what): the block averages are the result", file: file, line: line)
        print("ACCOUNTING \(what): budget counted \(estimate), resident grew \(growth)")
        XCTAssertLessThanOrEqual(growth, estimate + Self.overhead,
                                 "\(what): the decode held \(growth) bytes, the budget counted \(estimate)", file: file, line: line)
        XCTAssertLessThan(growth, width * height * 4, "\(what): a full-size bitmap was never held", file: file, line: line)
    }

    func testOpaqueEightBitPNG() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        let data = try png(width: 6000, height: 4000, ["-define", "png:color-type=2"], type: "PNG24")
        try assertAccounted(data, width: 6000, height: 4000, maxPixelSize: 1500, "6000×4000 8-bit RGB at 1500")
    }

    /// A 6000×4000 PNG with 60 % alpha at `depth` bits, tagged Display P3 or not, measured at 1500 (a tagged one
    /// after a 64 px warm-up of the same tags).
    private func assertAlphaPNGAccounted(depth: Int, tagged: Bool) throws {
        if tagged, !FileManager.default.fileExists(atPath: Self.displayP3) { throw XCTSkip("\(Self.displayP3) missing") }
        let type = depth == 16 ? "PNG64" : "PNG32"
        let tags = ["-depth", String(depth)] + (tagged ? ["-profile", Self.displayP3] : [])
        let data = try png(width: 6000, height: 4000, ["-alpha", "set", "-channel", "A", "-evaluate", "set", "60%", "+channel"] + tags,
                           type: type)
        XCTAssertEqual(Int(data[24]), depth, "a \(depth)-bit PNG")
        let warmUp = tagged ? try png(width: 64, height: 64, ["-alpha", "set"] + tags, type: type) : nil
        try assertAccounted(data, width: 6000, height: 4000, maxPixelSize: 1500,
                            "6000×4000 \(depth)-bit RGBA \(tagged ? "Display P3" : "untagged") at 1500", warmUp: warmUp)
    }

    func testSixteenBitTaggedPNGWithAlpha() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        try assertAlphaPNGAccounted(depth: 16, tagged: true)
    }

    func testSixteenBitUntaggedPNGWithAlpha() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        try assertAlphaPNGAccounted(depth: 16, tagged: false)
    }

    func testEightBitTaggedPNGWithAlpha() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        try assertAlphaPNGAccounted(depth: 8, tagged: true)
    }

    func testGreyPNG() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        let data = try png(width: 6000, height: 4000, ["-colorspace", "Gray"], type: "PNG8")
        try assertAccounted(data, width: 6000, height: 4000, maxPixelSize: 1500, "6000×4000 grey at 1500")
    }
}
