import Dispatch
import Synchronization
import Foundation
import ImageCodec
import TestSupport
import WebImage
import XCTest

/// The bitmaps of progressive downloads count in the manager's `DecodeBudget`: they are held for as long as a
/// download lasts (a dripping server: up to the timeout), so before they were counted, 64 progressive requests
/// for 75-megapixel images held 64 × 600 MB outside any bound. A partial decoder takes budget only when it fits
/// at once within `DecodeBudget.partialShare`; otherwise its request shows no partial images and still finishes.
final class ProgressiveDecodeBudgetTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    private let (width, height) = (640, 480)
    /// What the partial decoder of a `width × height` image reserves: two full RGBA frames.
    private var partialCost: Int { width * height * 8 }

    private func manager(capacity: Int) throws -> (ImageManager, DecodeBudget) {
        let budget = DecodeBudget(capacity: capacity)
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path), queue: fixture.queue,
                                   decodeBudget: budget)
        return (manager, budget)
    }

    /// Serves a progressive JPEG dripped over about two seconds.
    private func drippedProgressiveJPEG(_ path: String, seed: Int = 0) throws -> URL {
        let data = try TestImages.jpeg(width: width, height: height, progressive: true, seed: seed)
        fixture.server.route(path, .drip(data, chunk: max(1, data.count / 8), interval: 0.25))
        return fixture.server.url(path)
    }

    func testPartialImagesHoldTheirBitmapsBudgetWhileTheDownloadLastsAndGiveItBack() throws {
        // Given a budget with room for the partial decoder
        let (manager, budget) = try manager(capacity: 64 << 20)
        let url = try drippedProgressiveJPEG("/p.jpg")
        let seenDuringPartials = Mutex<[Int]>([])
        let done = expectation(description: "finished")

        // When the download drips
        manager.requestImage(url: url, options: [.progressive, .ignoreDiskCache]) { image, _, _, stage, _ in
            if stage == .progress {
                seenDuringPartials.withLock { $0.append(budget.bytesInUseByPartialImages) }
            } else {
                XCTAssertEqual(stage, .finished)
                XCTAssertNotNil(image)
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 20)

        // Then every partial image was delivered while its bitmap held the budget, and none is held after
        let seen = seenDuringPartials.withLock { $0 }
        XCTAssertFalse(seen.isEmpty, "partial images arrive while the body drips")
        XCTAssertEqual(Set(seen), [partialCost], "the partial decoder's bitmap was not counted while it was held")
        waitUntil("the budget is given back") { budget.bytesInUse == 0 }
        XCTAssertEqual(budget.bytesInUseByPartialImages, 0)
        XCTAssertEqual(budget.runningCount, 0)
    }

    func testPNGAndGIFDownloadsShowPartialImagesWithinTheBudgetToo() throws {
        // Given a baseline PNG and an animated GIF: their headers come first, their size is known at once
        // (a GIF's full `info` walks every frame: waiting for it would wait for the whole file)
        let (manager, budget) = try manager(capacity: 64 << 20)
        var gif = ImageEncoder(format: .gif, loopCount: 0)
        for frame in 0..<3 { gif.addFrame(try TestImages.pattern(width: width, height: height, seed: frame), duration: 0.1) }
        for (path, data) in [("/p.png", try TestImages.png(width: width, height: height)), ("/g.gif", try gif.encode())] {
            fixture.server.route(path, .drip(data, chunk: max(1, data.count / 8), interval: 0.25))
            let seen = Mutex<[Int]>([])
            let done = expectation(description: "\(path) finished")
            manager.requestImage(url: fixture.server.url(path), options: [.progressive, .ignoreDiskCache]) { image, _, _, stage, _ in
                if stage == .progress {
                    seen.withLock { $0.append(budget.bytesInUseByPartialImages) }
                } else {
                    XCTAssertNotNil(image, path)
                    done.fulfill()
                }
            }
            wait(for: [done], timeout: 20)
            XCTAssertFalse(seen.withLock { $0 }.isEmpty, "\(path): no partial images")
            XCTAssertEqual(Set(seen.withLock { $0 }), [partialCost], path)
            waitUntil("\(path): the budget is given back") { budget.bytesInUse == 0 }
        }
    }

    func testDownloadsThatNeverShowPartialImagesHoldNoBudgetForThem() throws {
        // WebP never gives partial images, nor does a baseline JPEG with blur: no partial decoder, no budget
        let (manager, budget) = try manager(capacity: 64 << 20)
        var webp = ImageEncoder(format: .webp, options: EncodeOptions(quality: 0.9))
        webp.addFrame(try TestImages.pattern(width: width, height: height))
        let cases: [(String, Data, ImageOptions)] = [
            ("/w.webp", try webp.encode(), [.progressive]),
            ("/baseline.jpg", try TestImages.jpeg(width: width, height: height), [.progressiveBlur]),
        ]
        for (path, data, options) in cases {
            fixture.server.route(path, .drip(data, chunk: max(1, data.count / 6), interval: 0.2))
            let peak = PartialBudgetPeak(budget)
            let outcome = fixture.load(fixture.server.url(path), options: options.union(.ignoreDiskCache), manager: manager)
            XCTAssertEqual(outcome.stage, .finished, path)
            XCTAssertEqual(outcome.partials, 0, path)
            XCTAssertEqual(peak.stop(), 0, "\(path): budget held for partial images that never come")
        }
    }

    func testExactlyAtThePartialShareFitsAndOneByteLessShowsNoPartialImagesButFinishes() throws {
        // A share of exactly the partial decoder's cost: partial images
        let (fits, _) = try manager(capacity: partialCost * 2)
        let outcome = fixture.load(try drippedProgressiveJPEG("/at.jpg"), options: [.progressive, .ignoreDiskCache], manager: fits)
        XCTAssertEqual(outcome.stage, .finished)
        XCTAssertGreaterThan(outcome.partials, 0, "a partial bitmap exactly at the share was refused")

        // One byte less: none, and the image still comes (the final decode waits as any other)
        let (tight, budget) = try manager(capacity: partialCost * 2 - 2)
        let refused = fixture.load(try drippedProgressiveJPEG("/past.jpg", seed: 1), options: [.progressive, .ignoreDiskCache],
                                   manager: tight)
        XCTAssertEqual(refused.stage, .finished)
        XCTAssertNotNil(refused.image)
        XCTAssertEqual(refused.image?.width, width)
        XCTAssertEqual(refused.partials, 0, "a partial bitmap past the share was decoded anyway")
        waitUntil("the budget is given back") { budget.bytesInUse == 0 }
    }

    func testConcurrentProgressiveDownloadsNeverHoldMoreThanTheShare() throws {
        // Given a share with room for one partial decoder, and four downloads at once
        let (manager, budget) = try manager(capacity: partialCost * 2)
        let urls = try (0..<4).map { try drippedProgressiveJPEG("/c\($0).jpg", seed: $0) }
        let partials = Mutex([Int](repeating: 0, count: urls.count))
        let done = expectation(description: "all finished")
        done.expectedFulfillmentCount = urls.count
        let peak = PartialBudgetPeak(budget)

        // When they drip together
        for (index, url) in urls.enumerated() {
            manager.requestImage(url: url, options: [.progressive, .ignoreDiskCache]) { image, _, _, stage, _ in
                if stage == .progress { partials.withLock { $0[index] += 1 }; return }
                XCTAssertEqual(stage, .finished)
                XCTAssertNotNil(image)
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 30)
        let peakBytes = peak.stop()

        // Then the partial bitmaps never passed the share, and at least one request showed partial images
        XCTAssertLessThanOrEqual(peakBytes, partialCost, "partial bitmaps past the share")
        XCTAssertGreaterThan(peakBytes, 0)
        let counts = partials.withLock { $0 }
        XCTAssertTrue(counts.contains { $0 > 0 }, "no request showed partial images: \(counts)")
        XCTAssertTrue(counts.contains(0), "four partial decoders fit a share of one: \(counts)")
        waitUntil("the budget is given back") { budget.bytesInUse == 0 }
    }

    func testCancellingMidDownloadGivesThePartialBudgetBackAndCompletesOnce() throws {
        let (manager, budget) = try manager(capacity: 64 << 20)
        let url = try drippedProgressiveJPEG("/cancel.jpg")
        let finals = Mutex<[ImageStage]>([])
        let firstPartial = expectation(description: "a partial image")
        firstPartial.assertForOverFulfill = false
        let operation = manager.requestImage(url: url, options: [.progressive, .ignoreDiskCache]) { _, _, _, stage, _ in
            if stage == .progress { firstPartial.fulfill(); return }
            finals.withLock { $0.append(stage) }
        }
        wait(for: [firstPartial], timeout: 20)
        XCTAssertEqual(budget.bytesInUseByPartialImages, partialCost)

        // The owner cancels, using the manager from its own thread meanwhile
        operation.cancel()
        waitUntil("the partial budget is given back") { budget.bytesInUse == 0 }
        XCTAssertEqual(finals.withLock { $0 }, [.cancelled], "exactly once")
        // The budget serves the next request in full
        let next = fixture.load(try drippedProgressiveJPEG("/after.jpg", seed: 2), options: [.progressive, .ignoreDiskCache],
                                manager: manager)
        XCTAssertGreaterThan(next.partials, 0)
    }
}

/// The most bytes a budget held for partial images while it was watched (sampled every 0.5 ms on a thread
/// of its own, from `init` to `stop()`).
private final class PartialBudgetPeak: Sendable {
    private let peak = Mutex(0)
    private let sampling = Atomic(true)
    private let finished = DispatchSemaphore(value: 0)

    init(_ budget: DecodeBudget) {
        Thread { [self] in
            while sampling.load(ordering: .relaxed) {
                let inUse = budget.bytesInUseByPartialImages
                peak.withLock { $0 = max($0, inUse) }
                usleep(500)
            }
            finished.signal()
        }.start()
    }

    /// Stops watching; returns the peak.
    func stop() -> Int {
        sampling.store(false, ordering: .relaxed)
        finished.wait()
        return peak.withLock { $0 }
    }
}

/// `DecodeBudget.reserveForPartialImages` alone.
final class DecodeBudgetPartialImagesTests: XCTestCase {
    func testAPartialReservationFitsAtOnceWithinTheShareOrNotAtAll() {
        let budget = DecodeBudget(capacity: 100)
        XCTAssertNil(budget.reserveForPartialImages(cost: 51), "past half of the capacity")
        let first = budget.reserveForPartialImages(cost: 30)
        XCTAssertNotNil(first)
        XCTAssertNil(budget.reserveForPartialImages(cost: 21), "the share is for all partial images together")
        let second = budget.reserveForPartialImages(cost: 20)
        XCTAssertNotNil(second, "exactly at the share")
        XCTAssertEqual(budget.bytesInUse, 50)
        XCTAssertEqual(budget.bytesInUseByPartialImages, 50)
        XCTAssertEqual(budget.runningCount, 0, "partial images are not decodes")
        first?.release()
        first?.release() // once
        second?.release()
        XCTAssertEqual(budget.bytesInUse, 0)
        XCTAssertEqual(budget.bytesInUseByPartialImages, 0)
    }

    func testNoAloneExceptionAndNoOvertakingAWaiter() {
        // Nothing runs, yet a partial bitmap larger than the share is refused (run() would run it alone)
        let budget = DecodeBudget(capacity: 10)
        XCTAssertNil(budget.reserveForPartialImages(cost: 11))

        // A decode waits: partial images never go before it
        let (held, started) = holdOneDecodeAndQueueAnother(budget, holding: 8, waiting: 8)
        XCTAssertNil(budget.reserveForPartialImages(cost: 1), "a partial reservation overtook a waiting decode")
        held.release()
        wait(for: [started], timeout: 10)
    }

    /// Starts a decode of `holding` bytes (its reservation is returned, for the test to release) and queues
    /// one of `waiting` bytes behind it, which releases at once when it starts (`started` is fulfilled).
    private func holdOneDecodeAndQueueAnother(_ budget: DecodeBudget, holding: Int, waiting: Int)
        -> (held: DecodeBudget.Reservation, started: XCTestExpectation) {
        let queue = DispatchQueue(label: "partial-tests")
        let held = Mutex<DecodeBudget.Reservation?>(nil)
        budget.run(cost: holding, on: queue) { reservation in held.withLock { $0 = reservation } }
        let started = expectation(description: "the waiter starts")
        budget.run(cost: waiting, on: queue) { reservation in
            reservation.release()
            started.fulfill()
        }
        XCTAssertEqual(budget.waitingCount, 1)
        return (held.withLock { $0 }!, started)
    }

    func testReleasingAPartialReservationStartsTheWaitersThatNowFit() {
        let budget = DecodeBudget(capacity: 100)
        let partial = budget.reserveForPartialImages(cost: 50)
        XCTAssertNotNil(partial)
        let (held, started) = holdOneDecodeAndQueueAnother(budget, holding: 50, waiting: 40)
        partial?.release()
        wait(for: [started], timeout: 10) // the waiter starts when the partial bitmap is freed
        held.release()
        XCTAssertEqual(budget.bytesInUse, 0)
    }
}
