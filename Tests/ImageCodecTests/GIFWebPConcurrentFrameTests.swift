import Foundation
import ImageCodec
import Synchronization
import TestSupport
import XCTest

/// Lazy frame sources are shared by every thread that asks an `Image` for a frame: random frames asked
/// from many threads at once must equal the preloaded frames.
final class GIFWebPConcurrentFrameTests: XCTestCase {
    func testConcurrentRandomAccessMatchesPreloadedFrames() throws {
        let gif = try GIFWebPCorpus.entries(format: "gif").filter { $0.isExpectedOK && ($0.frameCount ?? 0) >= 8 }
        let webp = try GIFWebPCorpus.entries(format: "webp").filter { $0.isExpectedOK && ($0.frameCount ?? 0) >= 8 }
        let entries = Array(gif.prefix(2)) + Array(webp.prefix(2))
        XCTAssertFalse(entries.isEmpty)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let lazy = try ImageDecoder.decode(data)
            let eager = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true))
            let expected = try eager.allFrames().map(\.buffer)
            let mismatches = Atomic<Int>(0)
            let failures = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                var rng = SplitMix64(seed: UInt64(worker + 1))
                for _ in 0..<12 {
                    let index = Int(rng.next() % UInt64(expected.count))
                    do {
                        if try lazy.frame(at: index).buffer != expected[index] { mismatches.add(1, ordering: .relaxed) }
                    } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }
            XCTAssertEqual(mismatches.load(ordering: .relaxed), 0, entry.path)
            XCTAssertEqual(failures.load(ordering: .relaxed), 0, entry.path)
        }
    }
}
