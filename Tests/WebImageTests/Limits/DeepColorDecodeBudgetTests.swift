import Dispatch
import Foundation

import TestSupport
import WebImage
import WebImageAVIF
import WebImageHEIF
import XCTest

/// Accounting of the 16-bit temporaries of the AVIF and HEIF modules: a full-size decode of a 10-bit image tagged
/// Display P3 converts its colour at 16 bits (8 bytes a pixel, and libheif's own intermediates) before reducing to
/// 8 (4 bytes a pixel), and
/// `DecodeBudget.estimatedCost` counts that temporary (through `ImageDecoding.colorTemporaryByteCount`). What is
/// really held is measured as the peak resident growth (`VmHWM`) of the tagged decode against the same pixels
/// untagged (which take the 8-bit path): the difference is the colour stage's, the codec's own planes cancel out.
final class DeepColorDecodeBudgetTests: XCTestCase {
    static let displayP3 = "/usr/share/color/argyll/ref/DisplayP3.icm"
    /// What a decode may allocate besides what is counted and not the same in both decodes (page rounding,
    /// allocator slack, the transform's tables).
    static let overhead = 2 << 20
    static let side = 1500
    private var registrations: [ImageCodecRegistration] = []

    override func setUp() {
        super.setUp()
        registrations = AVIFCodec.register() + HEIFCodec.register()
        ResidentMemory.mapLargeBlocks()  // each decode's peak its own
    }

    override func tearDown() {
        registrations.forEach { ImageCodecRegistry.shared.unregister($0) }
        super.tearDown()
    }

    private enum Format: String {
        case avif, heic

        /// The temporary counted a pixel: libavif's 16-bit RGBA (8); libheif's 16-bit images (14, measured).
        var temporaryBytesPerPixel: Int { self == .avif ? 8 : HEIFDecoder.deepTemporaryBytesPerPixel }
    }

    /// A `side`² 10-bit image (ImageMagick's plasma through a 16-bit PNG; `avifenc -d 10` or `heif-enc -b 10`),
    /// tagged Display P3 or untagged (the same pixels).
    private func deepImage(_ format: Format, tagged: Bool) throws -> Data {
        let encoder = format == .avif ? "avifenc" : "heif-enc"
        for tool in ["convert", encoder] where ReferenceDecoder.path(of: tool) == nil { throw XCTSkip("\(tool) missing") }
        guard FileManager.default.fileExists(atPath: Self.displayP3) else { throw XCTSkip("\(Self.displayP3) missing") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-deep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("in.png"), out = dir.appendingPathComponent("out.\(format.rawValue)")
        _ = try ReferenceDecoder.run("convert", ["-seed", "3", "-size", "\(Self.side)x\(Self.side)", "plasma:", "-depth", "16",
                                                 "-define", "png:color-type=2"] + (tagged ? ["-profile", Self.displayP3] : [])
                                                 + ["PNG48:" + png.path])
        if format == .avif {
            _ = try ReferenceDecoder.run("avifenc", ["-d", "10", "-y", "420", "-s", "10", png.path, out.path])
        } else {
            _ = try ReferenceDecoder.run("heif-enc", ["-b", "10", "-q", "80", png.path, "-o", out.path])
        }
        return try Data(contentsOf: out)
    }

    /// The estimate counts the bitmap and the 16-bit temporary of a tagged full-size decode, and nothing more
    /// where no deep transform runs (untagged, `.preserve`, a thumbnail: converted after the resize at 8 bits).
    private func assertEstimates(_ format: Format) throws {
        let tagged = try deepImage(format, tagged: true), untagged = try deepImage(format, tagged: false)
        let pixels = Self.side * Self.side
        var preserve = DecodeOptions()
        preserve.colorManagement = .preserve
        let temporary = pixels * format.temporaryBytesPerPixel
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: tagged, options: DecodeOptions()), temporary, "\(format)")
        XCTAssertEqual(DecodeBudget.estimatedCost(of: tagged, options: DecodeOptions()), pixels * 4 + temporary, "\(format)")
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: untagged, options: DecodeOptions()), 0, "\(format) untagged")
        XCTAssertEqual(DecodeBudget.estimatedCost(of: untagged, options: DecodeOptions()), pixels * 4, "\(format) untagged")
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: tagged, options: preserve), 0, "\(format) .preserve")
        // A thumbnail keeps a 16-bit copy of the image and shrinks it by 3 × 3 boxes (to 500², at least 2 × 200)
        // to convert: 12 bytes a cell.
        let grid = ColorConversion.deepThumbnailWorkingByteCount(width: Self.side, height: Self.side, maxPixelSize: 200)
        XCTAssertEqual(grid, 500 * 500 * 12)
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: tagged, options: DecodeOptions(maxPixelSize: 200)),
                       temporary + grid, "\(format) thumbnail")
        XCTAssertEqual(DecodeBudget.estimatedCost(of: tagged, options: DecodeOptions(maxPixelSize: 200)),
                       200 * 200 * 4 + temporary + grid, "\(format) thumbnail")
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: untagged, options: DecodeOptions(maxPixelSize: 200)), 0)
        // Garbage after the signature: no temporary, no crash.
        XCTAssertEqual(ImageDecoder.colorTemporaryByteCount(of: tagged.prefix(40), options: DecodeOptions()), 0)
    }

    func testAVIFEstimateCountsTheTemporary() throws { try assertEstimates(.avif) }
    func testHEIFEstimateCountsTheTemporary() throws { try assertEstimates(.heic) }

    /// The resident growth the tagged decode adds over the untagged one is within what the estimate adds (the
    /// temporary) plus `overhead`, and at least half a temporary's worth (the deep path really ran).
    private func assertHeldIsCounted(_ format: Format, minimumExtraBytesPerPixel: Int, maxPixelSize: Int? = nil) throws {
        let tagged = try deepImage(format, tagged: true), untagged = try deepImage(format, tagged: false)
        let pixels = Self.side * Self.side
        let options = DecodeOptions(maxPixelSize: maxPixelSize)
        func measure(_ data: Data) throws -> (estimate: Int, growth: Int) {
            let estimate = DecodeBudget.estimatedCost(of: data, options: options)
            let (result, growth) = ResidentMemory.measuringPeakGrowth { Result { try ImageDecoder.decode(data, options: options) } }
            guard let growth else { throw XCTSkip("/proc/self/clear_refs is not writable here: no peak to measure") }
            let image = try result.get()
            XCTAssertEqual(image.width, maxPixelSize ?? Self.side)
            return (estimate, growth)
        }
        // Each measured twice, the smaller growth kept: the first decode of a process also maps the codec's code.
        let plain = try [measure(untagged), measure(untagged)].min { $0.growth < $1.growth }!
        let deep = try [measure(tagged), measure(tagged)].min { $0.growth < $1.growth }!
        let heldExtra = deep.growth - plain.growth, countedExtra = deep.estimate - plain.estimate
        let what = "\(format) 10-bit P3 \(Self.side)²" + (maxPixelSize.map { " → \($0) px" } ?? "")
        print("ACCOUNTING \(what): budget counted \(deep.estimate) (untagged \(plain.estimate)), "
              + "resident grew \(deep.growth) (untagged \(plain.growth)): the colour stage held \(heldExtra), counted \(countedExtra)")
        XCTAssertGreaterThanOrEqual(countedExtra, pixels * 8)
        XCTAssertLessThanOrEqual(heldExtra, countedExtra + Self.overhead, "\(what): held more than the budget counted")
        XCTAssertGreaterThanOrEqual(heldExtra, pixels * minimumExtraBytesPerPixel, "\(what): the deep path ran")
    }

    /// AVIF: libavif's 16-bit RGBA (8 bytes a pixel) beside the 8-bit bitmap.
    func testAVIFTemporaryHeldIsCounted() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        try assertHeldIsCounted(.avif, minimumExtraBytesPerPixel: 6)
    }

    /// HEIF: libheif's 16-bit interleaved plane (8 bytes a pixel, converted from in place) instead of its 8-bit
    /// one (4): 4 bytes a pixel more than the untagged decode, 8 counted.
    func testHEIFTemporaryHeldIsCounted() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        try assertHeldIsCounted(.heic, minimumExtraBytesPerPixel: 3)
    }

    /// Thumbnails: the tagged one holds the 16-bit copy and the grid where the untagged one holds the 8-bit image
    /// (HEIF's untagged thumbnail holds libheif's 8-bit plane and our copy of it: about what the tagged one holds,
    /// so only the upper bound says something there).
    func testThumbnailTemporariesHeldAreCounted() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }
        try assertHeldIsCounted(.avif, minimumExtraBytesPerPixel: 3, maxPixelSize: 200)
        try assertHeldIsCounted(.heic, minimumExtraBytesPerPixel: 0, maxPixelSize: 200)
    }

    /// At the budget's edge: with one byte held by another decode, a budget of the estimate plus that byte starts
    /// the tagged decode at once; one byte less — or a budget sized for the bitmap alone, as before the temporary
    /// was counted — keeps it waiting (the budget never refuses a decode: it queues it) until the byte is released,
    /// and it then runs and decodes.
    func testBudgetAdmitsAtExactlyTheEstimateAndWaitsOneByteBelow() throws {
        for format in [Format.avif, .heic] {
            let tagged = try deepImage(format, tagged: true)
            let estimate = DecodeBudget.estimatedCost(of: tagged, options: DecodeOptions())
            let bitmapOnly = Self.side * Self.side * 4
            XCTAssertEqual(estimate, bitmapOnly + Self.side * Self.side * format.temporaryBytesPerPixel)
            for (capacity, runsAtOnce) in [(estimate + 1, true), (estimate, false), (bitmapOnly + 1, false)] {
                let budget = DecodeBudget(capacity: capacity)
                let held = Mutex<DecodeBudget.Reservation?>(nil)
                budget.run(cost: 1, on: .global()) { reservation in held.withLock { $0 = reservation } }
                XCTAssertNotNil(held.withLock { $0 }, "the byte is held")
                let decoded = expectation(description: "\(format) decoded with capacity \(capacity)")
                let started = Mutex(false)
                budget.run(cost: estimate, on: .global()) { reservation in
                    started.withLock { $0 = true }
                    let width = (try? ImageDecoder.decode(tagged))?.width
                    reservation.release()
                    if width == Self.side { decoded.fulfill() }
                }
                // Granted at once means run on this thread before `run` returned; otherwise it waits for the byte.
                XCTAssertEqual(started.withLock { $0 }, runsAtOnce, "\(format), capacity \(capacity)")
                XCTAssertEqual(budget.waitingCount, runsAtOnce ? 0 : 1, "\(format), capacity \(capacity)")
                held.withLock { $0?.release() }
                wait(for: [decoded], timeout: 60)
                XCTAssertEqual(budget.bytesInUse, 0)
            }
        }
    }
}
