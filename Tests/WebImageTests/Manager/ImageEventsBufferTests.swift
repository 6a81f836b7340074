import Foundation
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
        let task = Task { () -> Error? in
            var fulfilled = false
            do {
                for try await event in manager.imageEvents(for: url) {
                    if case .progress = event, !fulfilled { fulfilled = true; started.fulfill() }
                }
                return nil
            } catch { return error }
        }
        await fulfillment(of: [started], timeout: 20)
        task.cancel()
        let error = await task.value
        XCTAssertTrue(error is CancellationError, "ended with \(String(describing: error))")
    }
}
