import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// Accounting of animated canvases: a 140-byte animation declaring an 8000 × 8000 canvas around two 1 × 1
/// frames, asked for as a thumbnail, held 732 MiB (animated WebP: libwebp's two canvases and our copy) or
/// 489 MiB (APNG) while the decode budget reserved 2 KiB. Each test measures the resident memory a decode
/// really takes (the peak of `VmHWM` over the resident set before) against what `DecodeBudget.estimatedCost`
/// counted for it.
final class AnimatedCanvasBudgetTests: XCTestCase {
    /// What a decode allocates besides its bitmaps (decoder state, the copy of a WebP's bytes, page rounding).
    static let overhead = 2 << 20

    private static func frames(_ colours: [RGBA]) throws -> [PixelBuffer] {
        try colours.map { colour in
            var buffer = try PixelBuffer(width: 1, height: 1, pixelFormat: .rgba8)
            buffer.setPixel(x: 0, y: 0, to: colour)
            return buffer
        }
    }

    private static func encoded(_ format: ImageFormat) throws -> Data {
        var encoder = ImageEncoder(format: format, loopCount: 0, options: EncodeOptions(isLossless: true))
        for frame in try frames([RGBA(r: 255, g: 0, b: 0), RGBA(r: 0, g: 0, b: 255)]) {
            encoder.addFrame(frame, duration: 0.1)
        }
        return try encoder.encode()
    }

    static func webPBomb(side: Int) throws -> Data {
        try DecodeBombs.animatedWebP(try encoded(.webp), canvasWidth: side, canvasHeight: side)
    }

    static func gifBomb(side: Int) throws -> Data {
        try DecodeBombs.gifScreen(try encoded(.gif), width: side, height: side)
    }

    /// Decodes `data` with `options`, and checks that what became resident fits what the budget counted
    /// (plus `overhead`); returns the image and the bytes measured.
    @discardableResult
    private func assertAccounted(_ data: Data, options: DecodeOptions, _ what: String,
                                 file: StaticString = #filePath, line: UInt = #line) throws -> (Image, Int) {
        let estimate = DecodeBudget.estimatedCost(of: data, options: options)
        let (result, growth) = ResidentMemory.measuringPeakGrowth { Result { try ImageDecoder.decode(data, options: options) } }
        guard let growth else { throw XCTSkip("/proc/self/clear_refs is not writable here: no peak to measure") }
        let image = try result.get()
        print("ACCOUNTING \(what): \(data.count) bytes, budget counted \(estimate), resident grew \(growth)")
        XCTAssertLessThanOrEqual(growth, estimate + Self.overhead,
                                 "\(what): the decode held \(growth) bytes, the budget counted \(estimate)", file: file, line: line)
        return (image, growth)
    }

    func testTheBombsAreTiny() throws {
        XCTAssertLessThan(try Self.webPBomb(side: 8000).count, 200)
        XCTAssertLessThan(DecodeBombs.animatedPNG(canvasWidth: 8000, canvasHeight: 8000).count, 250)
        XCTAssertLessThan(try Self.gifBomb(side: 8000).count, 200)
        let info = try ImageDecoder.info(try Self.webPBomb(side: 8000))
        XCTAssertEqual([info.width, info.height, info.frameCount], [8000, 8000, 2])
        let apng = try ImageDecoder.info(DecodeBombs.animatedPNG(canvasWidth: 8000, canvasHeight: 8000))
        XCTAssertEqual([apng.width, apng.height, apng.frameCount], [8000, 8000, 2])
    }

    /// The thumbnail of an 8000² animated WebP of two 1 × 1 frames is made without a canvas: it holds about a
    /// thumbnail, and no more than the budget counted.
    func testAnimatedWebPThumbnailHoldsWhatTheBudgetCounts() throws {
        let (image, growth) = try assertAccounted(try Self.webPBomb(side: 8000), options: DecodeOptions(maxPixelSize: 256),
                                                  "animated WebP 8000² thumbnail")
        XCTAssertEqual([image.width, image.height, image.frameCount], [256, 256, 1])
        XCTAssertLessThan(growth, 32 << 20, "the thumbnail allocated a canvas-sized buffer")
        // The first frame, red, is in the top-left corner on a transparent canvas; the rest stays transparent.
        XCTAssertEqual(image.firstFrame.buffer.pixel(x: 255, y: 255).a, 0)
    }

    func testAPNGThumbnailHoldsWhatTheBudgetCounts() throws {
        let (image, growth) = try assertAccounted(DecodeBombs.animatedPNG(canvasWidth: 8000, canvasHeight: 8000),
                                                  options: DecodeOptions(maxPixelSize: 256), "APNG 8000² thumbnail")
        XCTAssertEqual([image.width, image.height, image.frameCount], [256, 256, 1])
        XCTAssertLessThan(growth, 32 << 20, "the thumbnail allocated a canvas-sized buffer")
        XCTAssertEqual(image.firstFrame.buffer.pixel(x: 255, y: 255).a, 0)
    }

    func testGIFThumbnailHoldsWhatTheBudgetCounts() throws {
        let (image, growth) = try assertAccounted(try Self.gifBomb(side: 8000), options: DecodeOptions(maxPixelSize: 256),
                                                  "GIF 8000² thumbnail")
        XCTAssertEqual([image.width, image.height], [256, 256])
        XCTAssertLessThan(growth, 32 << 20, "the thumbnail allocated a canvas-sized buffer")
    }

    /// Decoded whole (no thumbnail), an animation holds its canvases: libwebp's two and the first frame's copy;
    /// APNG's and GIF's canvas and frame. The budget counts them all.
    func testWholeAnimationsHoldWhatTheBudgetCounts() throws {
        let side = 3000
        for (what, data) in [("animated WebP", try Self.webPBomb(side: side)),
                             ("APNG", DecodeBombs.animatedPNG(canvasWidth: side, canvasHeight: side)),
                             ("GIF", try Self.gifBomb(side: side))] {
            for (mode, options) in [("lazy", DecodeOptions()), ("first frame", DecodeOptions(firstFrameOnly: true)),
                                    ("preloaded", DecodeOptions(preloadAllFrames: true))] {
                let (image, _) = try assertAccounted(data, options: options, "\(what) \(side)² \(mode)")
                XCTAssertEqual(image.width, side)
            }
        }
    }

    /// The reviewer's four concurrent thumbnail requests against a 1 GiB budget: each holds its thumbnail, so
    /// together they stay far below the budget (before: 1.4 GiB).
    func testFourConcurrentBombThumbnailsStayWithinTheBudget() throws {
        let bombs = [try Self.webPBomb(side: 8000), DecodeBombs.animatedPNG(canvasWidth: 8000, canvasHeight: 8000),
                     try Self.webPBomb(side: 8000), DecodeBombs.animatedPNG(canvasWidth: 8000, canvasHeight: 8000)]
        let budget = DecodeBudget(capacity: 1 << 30)
        let options = DecodeOptions(maxPixelSize: 256)
        let (failures, growth) = ResidentMemory.measuringPeakGrowth { () -> Int in
            let failures = Mutex(0)
            let group = DispatchGroup()
            for (index, bomb) in bombs.enumerated() {
                group.enter()
                let queue = DispatchQueue(label: "bomb-\(index)")
                queue.async {
                    budget.run(cost: DecodeBudget.estimatedCost(of: bomb, options: options), on: queue) { reservation in
                        defer { reservation.release(); group.leave() }
                        do { _ = try ImageDecoder.decode(bomb, options: options) } catch { failures.withLock { $0 += 1 } }
                    }
                }
            }
            group.wait()
            return failures.withLock { $0 }
        }
        guard let growth else { throw XCTSkip("/proc/self/clear_refs is not writable here: no peak to measure") }
        XCTAssertEqual(failures, 0)
        XCTAssertLessThanOrEqual(growth, budget.capacity)
        XCTAssertLessThan(growth, 64 << 20, "four thumbnails of two 1×1 frames held \(growth) bytes")
        XCTAssertEqual(budget.bytesInUse, 0)
    }
}
