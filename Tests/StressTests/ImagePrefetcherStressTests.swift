import Dispatch
import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Run under ThreadSanitizer by `make test`.
final class ImagePrefetcherStressTests: XCTestCase {
    /// 4 threads start and stop overlapping URL sets on two prefetchers (memory and disk destinations) while
    /// transfers complete; then everything is stopped: both drain, no race, and every `prefetch` call returns.
    func testStartAndStopFromManyThreads() async throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(try PixelBuffer(width: 6, height: 6))
        let png = try encoder.encode()
        for i in 0..<120 { server.route("/\(i).png", HTTPTestResponse.bytes(png).delayed(by: Double(i % 5) * 0.004)) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-prefetch-stress-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 6))
        let urls = (0..<120).map { server.url("/\($0).png") }
        let prefetchers = [ImagePrefetcher(manager: manager, maxConcurrentRequests: 3),
                           ImagePrefetcher(manager: manager, destination: .diskCache, maxConcurrentRequests: 3)]
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var rng = SplitMix64(seed: UInt64(worker + 1))
            for _ in 0..<300 {
                let prefetcher = prefetchers[Int(rng.next() % 2)]
                let start = Int(rng.next() % 110)
                let slice = Array(urls[start..<start + 10])
                if rng.next() % 3 == 0 { prefetcher.stopPrefetching(with: slice) } else { prefetcher.startPrefetching(with: slice) }
            }
        }
        async let first = prefetchers[0].prefetch(Array(urls.prefix(40)))
        async let second = prefetchers[1].prefetch(Array(urls.suffix(40)))
        let summaries = await [first, second]
        for summary in summaries {
            XCTAssertEqual(summary.loaded + summary.alreadyCached + summary.failed + summary.cancelled, 40)
            XCTAssertEqual(summary.failed, 0)
        }
        for prefetcher in prefetchers { prefetcher.stopPrefetching() }
        for prefetcher in prefetchers {
            let deadline = Date().addingTimeInterval(20)
            while prefetcher.pendingCount > 0, Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
            XCTAssertEqual(prefetcher.pendingCount, 0)
        }
    }
}
