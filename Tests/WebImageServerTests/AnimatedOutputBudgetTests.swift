import Foundation
import Synchronization
import TestSupport
import WebImageServerCore
import XCTest

/// What the watching thread saw: the most bytes in use, and when to stop.
private final class Watch: Sendable {
    let done = Atomic(false)
    let most = Mutex(0)
}

/// The decode budget counts what an animated request holds: its decoded frames and every output frame the
/// encoder keeps until it encodes (up to 800 MB for 200 Mpx), not only the decode.
final class AnimatedOutputBudgetTests: XCTestCase {
    /// An 8-frame 60×40 GIF kept as an animation at 1024×768: 8 × 1024 × 768 × 4 = 25 MB of output frames
    /// against 77 KB of decoded source. The budget in use while it renders is watched from another thread.
    func testTheKeptOutputFramesAreInTheBudget() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 8), contentType: "image/gif"))
        let budget = harness.service.manager.decodeBudget
        let expected = 8 * 1024 * 768 * 4
        let watch = Watch()
        let watcher = Thread {
            while !watch.done.load(ordering: .acquiring) {
                let inUse = budget.bytesInUse
                watch.most.withLock { $0 = max($0, inUse) }
                usleep(200)
            }
        }
        watcher.start()
        let reply = await harness.image([("url", harness.source("/anim.gif")), ("format", "gif"), ("anim", "1"),
                                         ("w", "1024"), ("h", "768"), ("fit", "fill")])
        watch.done.store(true, ordering: .releasing)
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(try reply.decoded().frameCount, 8)
        let most = watch.most.withLock { $0 }
        XCTAssertGreaterThanOrEqual(most, expected, "the budget held \(most) bytes while \(expected) of output frames were made")
        XCTAssertEqual(budget.bytesInUse, 0, "the reservation was not given back")
        await harness.stop()
    }
}
