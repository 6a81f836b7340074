import Foundation
import Fetcher
import ImageCodec
import Synchronization
import TestSupport
import WebImage
import XCTest

/// `imageEvents` with a consumer slower than the download: partial images do not pile up in the stream (they
/// held 24 MB for a slow reader against the 8 MB share partial images have in the decode budget). Only the
/// newest partial waits; progress events and the final image are all delivered.
final class ImageEventsBufferTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown() }

    /// Counts what a joined caller of the same transfer saw.
    private final class Seen: Sendable {
        let partials = Mutex(0)
    }

    func testASlowConsumerHoldsOnlyTheNewestPartialImage() async throws {
        let data = try TestImages.jpeg(width: 1000, height: 1000, progressive: true)
        fixture.server.route("/slow.jpg", .drip(data, chunk: max(1, data.count / 20), interval: 0.15))
        let url = fixture.server.url("/slow.jpg")
        let manager = fixture.manager
        // Given a consumer that reads nothing while the body drips…
        let events = manager.imageEvents(for: url, options: [.progressive])
        // …and a second caller joining the same transfer, whose completion says when the download is over.
        let done = expectation(description: "the joined caller finished")
        let seen = Seen()
        manager.requestImage(url: url, options: [.progressive]) { image, _, _, stage, _ in
            switch stage {
            case .progress: if image != nil { seen.partials.withLock { $0 += 1 } }
            default: done.fulfill()
            }
        }
        await fulfillment(of: [done], timeout: 60)
        // When the consumer reads at last.
        var partials: [Image] = []
        var progress: [Int64] = []
        var final: Image?
        for try await event in events {
            switch event {
            case .progress(let received, _): progress.append(received)
            case .partial(let image): partials.append(image)
            case .finished(let image, _): final = image
            }
        }
        // Then it finds at most the newest partial image (one more may race in as it starts reading), every
        // progress event, and the final image.
        let produced = seen.partials.withLock { $0 }
        XCTAssertGreaterThanOrEqual(produced, 3, "the drip should make several partial images (else this test proves nothing)")
        let held = partials.reduce(0) { $0 + $1.firstFrame.buffer.bytesPerRow * $1.height }
        let onePartial = 1000 * 1000 * 4
        print("ACCOUNTING imageEvents slow consumer: \(produced) partials made, \(partials.count) queued, \(held) bytes held")
        XCTAssertLessThanOrEqual(partials.count, 2)
        XCTAssertLessThanOrEqual(held, 2 * onePartial, "the stream held \(held) bytes of partial images")
        XCTAssertEqual(final?.width, 1000)
        XCTAssertEqual(progress.last, Int64(data.count), "the last progress event was dropped")
        XCTAssertEqual(progress, progress.sorted(), "progress events out of order")
        XCTAssertGreaterThanOrEqual(progress.count, 10, "progress events were dropped")
    }

    /// A consumer that keeps up sees every partial image, in order with the progress events.
    func testAConsumerThatKeepsUpSeesEveryPartialImage() async throws {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/p.jpg", .drip(data, chunk: max(1, data.count / 8), interval: 0.25))
        var partials = 0
        var finished = 0
        for try await event in fixture.manager.imageEvents(for: fixture.server.url("/p.jpg"), options: [.progressive]) {
            switch event {
            case .partial: partials += 1
            case .finished: finished += 1
            case .progress: break
            }
        }
        XCTAssertGreaterThan(partials, 0)
        XCTAssertEqual(finished, 1)
    }

    /// Cancelling the consuming task cancels the request and ends the sequence with `CancellationError`.
    func testCancellingTheConsumerCancelsTheRequest() async throws {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/stuck.jpg", .drip(data, chunk: 64, interval: 0.5))
        let manager = fixture.manager
        let url = fixture.server.url("/stuck.jpg")
        let started = expectation(description: "first progress event")
        let task = Task { await ImageEventsBufferTests.consume(manager, url, firstProgress: started) }
        await fulfillment(of: [started], timeout: 20)
        task.cancel()
        let (events, error) = await task.value
        XCTAssertTrue(error is CancellationError, "ended with \(String(describing: error)) after \(events) events")
    }

    /// Iterates `imageEvents(for: url)` to its end: how many events came, and the error the sequence ended with
    /// (`nil`: it ended after `.finished`). Fulfils `firstProgress` at the first progress event; with
    /// `cancellingAtProgress`, the iterating task cancels itself inside the loop body at every progress event.
    private static func consume(_ manager: ImageManager, _ url: URL, firstProgress: XCTestExpectation? = nil,
                                cancellingAtProgress: Bool = false) async -> (events: Int, error: (any Error)?) {
        var events = 0, progressEvents = 0
        do {
            for try await event in manager.imageEvents(for: url) {
                events += 1
                guard case .progress = event else { continue }
                progressEvents += 1
                if progressEvents == 1 { firstProgress?.fulfill() }
                if cancellingAtProgress { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return (events, nil)
        } catch { return (events, error) }
    }

    /// The race CI lost (stop 41): a cancel that lands while the consumer is between two events. With
    /// `AsyncThrowingStream(unfolding:)` the next `next()` returned `nil` — a request that "finished" without an
    /// image or an error. Here the consumer cancels its own task inside the loop body, every time.
    func testACancelBetweenTwoEventsThrowsCancellationError() async throws {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/between.jpg", .drip(data, chunk: 64, interval: 0.2))
        let manager = fixture.manager
        let url = fixture.server.url("/between.jpg")
        let task = Task { await ImageEventsBufferTests.consume(manager, url, cancellingAtProgress: true) }
        let (events, error) = await task.value
        XCTAssertGreaterThanOrEqual(events, 1)
        XCTAssertTrue(error is CancellationError, "ended with \(String(describing: error)) after \(events) events")
    }

    /// A task cancelled before it iterates: the request is cancelled and the first `next()` throws.
    func testATaskCancelledBeforeIteratingThrowsAtOnce() async throws {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/early.jpg", .drip(data, chunk: 64, interval: 0.5))
        let manager = fixture.manager
        let url = fixture.server.url("/early.jpg")
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return await ImageEventsBufferTests.consume(manager, url)
        }
        task.cancel()
        let (events, error) = await task.value
        XCTAssertTrue(error is CancellationError, "ended with \(String(describing: error)) after \(events) events")
    }

    /// A request that already finished (a memory hit) is not undone by a late cancel: its events are there.
    func testACancelAfterTheRequestFinishedStillYieldsItsImage() async throws {
        let url = fixture.serve("/done.png", try TestImages.png())
        _ = try await fixture.manager.image(for: url)
        let events = fixture.manager.imageEvents(for: url)
        var iterator = events.makeAsyncIterator()
        let settled = expectation(description: "memory hit delivered")
        // The memory hit is delivered on the completion path; give it a moment to reach the buffer.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { settled.fulfill() }
        await fulfillment(of: [settled], timeout: 5)
        withUnsafeCurrentTask { $0?.cancel() }
        var finished = 0
        do {
            while let event = try await iterator.next() {
                if case .finished(_, let source) = event { finished += 1; XCTAssertEqual(source, .memoryCache) }
            }
        } catch {
            XCTFail("a finished request threw \(error)")
        }
        XCTAssertEqual(finished, 1)
    }

    /// Dropping the sequence mid-download (the loop left early) cancels the request: the transfer stops and
    /// frees the only transfer slot, so a second image loads. Kept alive, the drip would hold it ~50 s.
    func testLeavingTheLoopEarlyCancelsTheRequest() async throws {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/leave.jpg", .drip(data, chunk: 64, interval: 0.1))
        let other = fixture.serve("/other.png", try TestImages.png())
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path + "/one-slot"),
                                   queue: FetchQueue(maxConcurrentTransfers: 1))
        for try await event in manager.imageEvents(for: fixture.server.url("/leave.jpg")) {
            if case .progress = event { break }
        }
        let loaded = expectation(description: "the second image loaded in the freed slot")
        manager.requestImage(url: other) { image, _, _, stage, _ in
            if stage == .finished, image != nil { loaded.fulfill() }
        }
        await fulfillment(of: [loaded], timeout: 10)
    }
}
