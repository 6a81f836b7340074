import Foundation
import TestSupport
import WebImage
import XCTest

/// Accounting of the colour stage's 16-bit temporary: a 16-bit PNG with a Display P3 profile is converted at
/// 16 bits (8 bytes a pixel) before it is reduced to 8 (4 bytes a pixel). The resident memory the decode really
/// takes (peak `VmHWM` growth) against what `DecodeBudget.estimatedCost` counted.
final class ColorDecodeBudgetTests: XCTestCase {
    static let displayP3 = "/usr/share/color/argyll/ref/DisplayP3.icm"
    /// What a decode allocates besides its bitmaps (libpng's rows and zlib state, page rounding).
    static let overhead = 2 << 20
    static let side = 1500

    /// Each decode's peak its own: with glibc's sliding mmap threshold, a decode after another reused the freed
    /// memory and its growth read 77,824 bytes in one full run (the assertion that the temporary is really
    /// allocated then failed), depending on which tests ran before.
    override func setUp() {
        ResidentMemory.mapLargeBlocks()
    }

    /// A `side`² 16-bit RGB PNG (ImageMagick), tagged with Display P3 or untagged.
    private func deepPNG(tagged: Bool) throws -> Data {
        guard ReferenceDecoder.path(of: "convert") != nil else { throw XCTSkip("ImageMagick is not installed (make test-deps)") }
        guard FileManager.default.fileExists(atPath: Self.displayP3) else { throw XCTSkip("\(Self.displayP3) missing") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-deep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("deep.png")
        _ = try ReferenceDecoder.run("convert", ["-size", "\(Self.side)x\(Self.side)", "gradient:red-blue", "-depth", "16",
                                                 "-define", "png:color-type=2"] + (tagged ? ["-profile", Self.displayP3] : [])
                                                 + ["PNG48:" + out.path])
        let data = try Data(contentsOf: out)
        XCTAssertEqual(data[24], 16, "a 16-bit PNG")
        return data
    }

    @discardableResult
    private func assertAccounted(_ data: Data, options: DecodeOptions, _ what: String,
                                 file: StaticString = #filePath, line: UInt = #line) throws -> (estimate: Int, growth: Int) {
        let estimate = DecodeBudget.estimatedCost(of: data, options: options)
        let (result, growth) = ResidentMemory.measuringPeakGrowth { Result { try ImageDecoder.decode(data, options: options) } }
        guard let growth else { throw XCTSkip("/proc/self/clear_refs is not writable here: no peak to measure") }
        _ = try result.get()
        print("ACCOUNTING \(what): budget counted \(estimate), resident grew \(growth)")
        XCTAssertLessThanOrEqual(growth, estimate + Self.overhead,
                                 "\(what): the decode held \(growth) bytes, the budget counted \(estimate)", file: file, line: line)
        return (estimate, growth)
    }

    func testSixteenBitTaggedPNGCountsItsTemporary() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        let data = try deepPNG(tagged: true)
        let pixels = Self.side * Self.side
        let (estimate, growth) = try assertAccounted(data, options: DecodeOptions(), "16-bit Display P3 PNG")
        XCTAssertEqual(estimate, pixels * 4 + pixels * 8, "the bitmap and the 16-bit temporary")
        // Resident growth is a lower bound (memory freed by earlier decodes may be reused), but the deep path holds
        // clearly more than the 8-bit bitmap alone.
        XCTAssertGreaterThan(growth, pixels * 4 + Self.overhead, "the temporary is really allocated (the deep path ran)")
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: data, options: DecodeOptions()), pixels * 8)
    }

    /// No transform (untagged, `.preserve`) or a thumbnail (converted at 8 bits): no temporary, none counted.
    func testNoTemporaryWithoutADeepTransform() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        let tagged = try deepPNG(tagged: true), untagged = try deepPNG(tagged: false)
        let pixels = Self.side * Self.side
        var preserve = DecodeOptions()
        preserve.colorManagement = .preserve
        XCTAssertEqual(try assertAccounted(untagged, options: DecodeOptions(), "16-bit untagged PNG").estimate, pixels * 4)
        XCTAssertEqual(try assertAccounted(tagged, options: preserve, "16-bit P3 PNG, .preserve").estimate, pixels * 4)
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: tagged, options: DecodeOptions(maxPixelSize: 200)), 0)
        try assertAccounted(tagged, options: DecodeOptions(maxPixelSize: 200), "16-bit P3 PNG thumbnail")
    }
}
