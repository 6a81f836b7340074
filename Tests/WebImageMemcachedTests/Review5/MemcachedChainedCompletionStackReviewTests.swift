import Foundation
import KVCache
import TestSupport
import WebImageMemcached
import XCTest

/// Review (defect): with a connection free, an operation runs on the calling thread and its completion runs
/// there before the call returns; the docs say a completion "may call the tier again". A caller that walks a
/// list that way (each completion asks for the next key — the ordinary shape of callback code) nests every
/// step inside the previous one: the stack grows by the frames of one round trip per step and is never
/// unwound until the walk ends. A few thousand steps overflow a 512 KB thread stack, tens of thousands the
/// 8 MB main stack: a crash (SIGSEGV) that depends only on how many keys the caller walks. Measured here as
/// the distance between the stack frames of the first and the last completion of a 1,000-step walk.
final class MemcachedChainedCompletionStackReviewTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    /// Each step's completion records where its frame is and starts the next step.
    private final class Walk: Sendable {
        let tier: MemcachedTier
        let frames = Mutex<[UInt]>([])
        let done = DispatchSemaphore(value: 0)

        init(tier: MemcachedTier) { self.tier = tier }

        func step(_ remaining: Int) {
            tier.value(forKey: "walk-\(remaining % 8)") { [self] _ in
                var marker = 0
                let frame = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
                frames.withLock { $0.append(frame) }
                if remaining == 0 { done.signal() } else { step(remaining - 1) }
            }
        }
    }

    func testACompletionThatCallsTheTierAgainDoesNotGrowTheStackPerStep() throws {
        servers = try startMemcached(1)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        for index in 0..<8 { XCTAssertTrue(tier.waitSet(payload(for: "walk-\(index)", size: 100), forKey: "walk-\(index)")) }
        let steps = 1_000
        let walk = Walk(tier: tier)
        walk.step(steps - 1)
        XCTAssertEqual(walk.done.wait(timeout: .now() + 30), .success, "the walk did not finish")
        let frames = walk.frames.withLock { $0 }
        XCTAssertEqual(frames.count, steps)
        let spread = (frames.max() ?? 0) - (frames.min() ?? 0)
        print("chained completions: \(steps) steps, stack spread \(spread) bytes (\(spread / UInt(steps)) per step)")
        XCTAssertLessThan(spread, 64 * 1_024,
                          "\(steps) chained steps used \(spread) bytes of stack (\(spread / UInt(steps)) per step): a 512 KB thread overflows after about \(512 * 1_024 / max(1, Int(spread) / steps)) steps")
    }
}
