import Foundation
import Synchronization
import TestSupport
import WebImageServerCore
import XCTest

/// Accounting of a render: every buffer a render makes (the decode, the blur's working plane and result, the
/// encoder's buffers) is reserved in the decode budget before it runs. A blur at 4096² held +260 MiB of
/// resident memory while 64 MiB were reserved; here the resident growth during the request is measured
/// against the most the budget held.
final class RenderBudgetAccountingTests: XCTestCase {
    /// What a request holds outside the render: the source's and the response's bytes, the HTTP buffers, the
    /// caches' bookkeeping, page rounding.
    static let overhead = 32 << 20

    private final class Watch: Sendable {
        let done = Atomic(false)
        let most = Mutex(0)
    }

    /// Requests `pairs` with a watcher on the budget; returns the reply status, the most bytes the budget held
    /// and the resident growth, or skips where the peak cannot be reset.
    private func measure(_ harness: ServerHarness, _ pairs: [(String, String)]) async throws -> (status: Int, most: Int, growth: Int) {
        try await Self.measure(harness, url: harness.imageURL(pairs))
    }

    /// `measure` for any URL of the server (a thumbor path); other accounting tests use it too.
    static func measure(_ harness: ServerHarness, url: URL) async throws -> (status: Int, most: Int, growth: Int) {
        let budget = harness.service.manager.decodeBudget
        let watch = Watch()
        let watcher = Thread {
            while !watch.done.load(ordering: .acquiring) {
                let inUse = budget.bytesInUse
                watch.most.withLock { $0 = max($0, inUse) }
                usleep(200)
            }
        }
        guard ResidentMemory.resetPeak() else { throw XCTSkip("/proc/self/clear_refs is not writable here") }
        let before = ResidentMemory.current
        watcher.start()
        let reply = await harness.get(url, timeout: 600)
        let growth = max(0, ResidentMemory.peak - before)
        watch.done.store(true, ordering: .releasing)
        XCTAssertEqual(budget.bytesInUse, 0, "the reservation was not given back")
        return (reply.status, watch.most.withLock { $0 }, growth)
    }

    /// libaom at speed 6 (`--encode-effort smallest`) holds up to about 100 MB more than speed 8 at 0.3–1 Mpx
    /// (`avifenc`: 122 MB at 1000×625 against 32 MB): `AVIFEncoder.fixedWorkingBytes(for:)` reserves it. Without
    /// it: 121 MB of growth against 30 MB held.
    func testAVIFAtTheSmallestEffortIsReserved() async throws {
        let photo: Data
        do {
            photo = try Data(contentsOf: try Corpus.require().appendingPathComponent("photos/kdewallpapers_PastelHills_3200x2000.jpg"))
        } catch { throw XCTSkip("\(error)") }
        let harness = try await ServerHarness { $0.renderTimeout = 0; $0.encodeEffort = .smallest }
        harness.origin.route("/hills.jpg", .bytes(photo, contentType: "image/jpeg"))
        let (status, most, growth) = try await measure(harness, [("url", harness.source("/hills.jpg")), ("w", "1000"), ("format", "avif")])
        await harness.stop()
        XCTAssertEqual(status, 200)
        print("ACCOUNTING avif at speed 6, 1000×625: budget held \(most) bytes at most, resident grew \(growth)")
        XCTAssertLessThanOrEqual(growth, most + Self.overhead, "the render held \(growth) bytes, the budget \(most)")
    }

    func testABlurAt4096IsReservedWholeBeforeItRuns() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/big.jpg", .bytes(DecodeBombs.grayJPEG(width: 4096, height: 4096), contentType: "image/jpeg"))
        let (status, most, growth) = try await measure(harness, [("url", harness.source("/big.jpg")), ("w", "4096"),
                                                                ("h", "4096"), ("blur", "8"), ("format", "jpeg")])
        await harness.stop()
        XCTAssertEqual(status, 200)
        print("ACCOUNTING blur 4096²: budget held \(most) bytes at most, resident grew \(growth)")
        // The blur alone makes 192 MiB (a 128 MiB plane and a 64 MiB result) besides the 64 MiB decode.
        XCTAssertGreaterThanOrEqual(most, 4096 * 4096 * 16, "the budget did not count the blur's buffers")
        XCTAssertLessThanOrEqual(growth, most + Self.overhead, "the render held \(growth) bytes, the budget \(most)")
    }

    /// A rotated (EXIF 6), cropped (cover), resized and blurred render as WebP: each step's buffers counted.
    func testEveryStepOfARenderIsReserved() async throws {
        let harness = try await ServerHarness()
        let jpeg = TestImages.withEXIFOrientation(Array(DecodeBombs.grayJPEG(width: 4000, height: 3000)), orientation: 6)
        harness.origin.route("/rotated.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        let (status, most, growth) = try await measure(harness, [("url", harness.source("/rotated.jpg")), ("w", "2900"),
                                                                ("h", "2000"), ("fit", "cover"), ("blur", "4"),
                                                                ("format", "webp")])
        await harness.stop()
        XCTAssertEqual(status, 200)
        print("ACCOUNTING rotate+cover+resize+blur → WebP: budget held \(most) bytes at most, resident grew \(growth)")
        XCTAssertLessThanOrEqual(growth, most + Self.overhead, "the render held \(growth) bytes, the budget \(most)")
    }

    /// Thumbor's filters at the box, from a tiny source: `fill(blur)` pads 64 × 64 to 4096², `sharpen` then works
    /// on the whole box. The decode is nothing; the filters' buffers are what the budget must count.
    func testThumborFiltersAtTheBoxAreReserved() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/tiny.png", .bytes(try TestImages.gradient(width: 64, height: 64, format: .png),
                                                 contentType: "image/png"))
        let origin = "127.0.0.1:\(harness.origin.url("/").port!)"
        let (status, most, growth) = try await Self.measure(harness, url: URL(string: "http://127.0.0.1:\(harness.port)/unsafe/fit-in/4096x4096/"
            + "filters:fill(blur):sharpen(1,2,false):format(jpeg)/\(origin)/tiny.png")!)
        await harness.stop()
        XCTAssertEqual(status, 200)
        print("ACCOUNTING thumbor fill(blur)+sharpen at 4096²: budget held \(most) bytes at most, resident grew \(growth)")
        XCTAssertGreaterThanOrEqual(most, 4096 * 4096 * 4 * 4, "the budget did not count the filters' buffers")
        XCTAssertLessThanOrEqual(growth, most + Self.overhead, "the render held \(growth) bytes, the budget \(most)")
    }

    /// thumbor's `trim` decodes the whole first frame (and an oriented copy) to find its box before the render is
    /// planned: that decode is reserved too, though the output is a thumbnail.
    func testATrimsFullSizeDecodeIsReserved() async throws {
        let harness = try await ServerHarness()
        let jpeg = TestImages.withEXIFOrientation(Array(DecodeBombs.grayJPEG(width: 4000, height: 3000)), orientation: 6)
        harness.origin.route("/rotated.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        let origin = "127.0.0.1:\(harness.origin.url("/").port!)"
        let (status, most, growth) = try await Self.measure(harness, url: URL(string: "http://127.0.0.1:\(harness.port)/unsafe/trim/"
            + "200x150/\(origin)/rotated.jpg")!)
        await harness.stop()
        XCTAssertEqual(status, 200)
        print("ACCOUNTING thumbor trim of 4000×3000 (EXIF 6): budget held \(most) bytes at most, resident grew \(growth)")
        XCTAssertGreaterThanOrEqual(most, 4000 * 3000 * 4 * 2, "the budget did not count the trim's decode and its oriented copy")
        XCTAssertLessThanOrEqual(growth, most + Self.overhead, "the trim held \(growth) bytes, the budget \(most)")
    }

    /// An animation kept as animated WebP at 2048²: eight output frames (128 MiB) held for libwebp's animation
    /// encoder, whose own canvases and candidate frames are counted too.
    func testAnAnimatedWebPRenderIsReserved() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 8), contentType: "image/gif"))
        let (status, most, growth) = try await measure(harness, [("url", harness.source("/anim.gif")), ("anim", "1"),
                                                                ("w", "2048"), ("h", "2048"), ("fit", "fill"),
                                                                ("format", "webp")])
        await harness.stop()
        XCTAssertEqual(status, 200)
        print("ACCOUNTING 8 frames at 2048² → animated WebP: budget held \(most) bytes at most, resident grew \(growth)")
        XCTAssertGreaterThanOrEqual(most, 8 * 2048 * 2048 * 4, "the kept output frames are not in the budget")
        XCTAssertLessThanOrEqual(growth, most + Self.overhead, "the render held \(growth) bytes, the budget \(most)")
    }

    /// AVIF and JPEG XL encodes at 2048² (and a 4096² JPEG recompressed into JPEG XL): the encoders' own working
    /// memory (libaom's frames, libjxl's float planes, the JPEG's coefficients) is reserved, not only the pixels.
    func testAVIFAndJXLEncodesAreReserved() async throws {
        for (format, size) in [("avif", 2048), ("jxl", 2048), ("jxl", 4096)] {
            let harness = try await ServerHarness { $0.renderTimeout = 0 }
            harness.origin.route("/big.jpg", .bytes(DecodeBombs.grayJPEG(width: size, height: size), contentType: "image/jpeg"))
            // At 4096 the JPEG is served at its own size: recompressed, never decoded.
            let resize: [(String, String)] = size == 4096 ? [] : [("w", "\(size - 1)")]
            let (status, most, growth) = try await measure(harness, [("url", harness.source("/big.jpg")), ("format", format)] + resize)
            let decodes = harness.service.statistics.decodes
            await harness.stop()
            XCTAssertEqual(status, 200, "\(format) \(size)")
            print("ACCOUNTING \(format) at \(size)²: budget held \(most) bytes at most, resident grew \(growth)")
            if size == 4096 { XCTAssertEqual(decodes, 0, "recompressed") }
            XCTAssertLessThanOrEqual(growth, most + Self.overhead, "\(format) \(size)²: the render held \(growth) bytes, the budget \(most)")
        }
    }
}
