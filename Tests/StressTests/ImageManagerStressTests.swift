import Dispatch
import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Run under ThreadSanitizer by `make test`.
final class ImageManagerStressTests: XCTestCase {
    /// 10,000 requests from 4 threads over 200 URLs with a disk cache, 40 % cancelled at random moments from
    /// other threads: every completion exactly once, no data race.
    func testConcurrentRequestsAndCancels() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        var encoder = ImageEncoder(format: .png)
        var buffer = try PixelBuffer(width: 8, height: 8)
        buffer.setPixel(x: 1, y: 1, to: RGBA(r: 9, g: 9, b: 9))
        encoder.addFrame(buffer)
        let png = try encoder.encode()
        for i in 0..<200 { server.route("/\(i).png", HTTPTestResponse.bytes(png).delayed(by: Double(i % 4) * 0.005)) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-stress-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 6))
        let total = 10_000
        let counts = Mutex<[Int]>(Array(repeating: 0, count: total))
        let cancelled = Mutex(0)
        let all = expectation(description: "all")
        all.expectedFulfillmentCount = total
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for n in stride(from: worker, to: total, by: 4) {
                // A third always goes to the network (memory hits would complete before any cancel could land).
                let options: ImageOptions = n % 3 == 0 ? [.refreshImageCache] : n % 11 == 0 ? [.ignoreDiskCache] : []
                let operation = manager.requestImage(url: server.url("/\(n % 200).png"), options: options) { _, _, _, stage, _ in
                    guard stage != .progress else { return }
                    counts.withLock { $0[n] += 1 }
                    if stage == .cancelled { cancelled.withLock { $0 += 1 } }
                    all.fulfill()
                }
                if n % 5 < 2 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...20_000))) { operation.cancel() }
                }
            }
        }
        wait(for: [all], timeout: 120)
        XCTAssertTrue(counts.withLock { $0.allSatisfy { $0 == 1 } })
        // The cancels landed while work was in flight, not only after completion.
        XCTAssertGreaterThan(cancelled.withLock { $0 }, total / 20)
    }

    /// Setters rebound from many threads while results arrive.
    func testSettersReboundFromManyThreads() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        var pngs: [Data] = []
        for i in 0..<10 {
            var encoder = ImageEncoder(format: .png)
            encoder.addFrame(try PixelBuffer(width: 4 + i, height: 4))
            pngs.append(try encoder.encode())
            server.route("/\(i).png", HTTPTestResponse.bytes(pngs[i]).delayed(by: Double(i % 3) * 0.003))
        }
        let manager = ImageManager(cache: nil, queue: FetchQueue())
        let setter = ImageSetter()
        let queue = DispatchQueue(label: "display")
        let shown = Mutex(0)
        let completions = Mutex(0)
        let all = expectation(description: "all")
        all.expectedFulfillmentCount = 800
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for n in 0..<200 {
                setter.setImage(with: server.url("/\((worker + n) % 10).png"), options: [.ignorePlaceholder], manager: manager,
                                queue: queue, apply: { _ in shown.withLock { $0 += 1 } }) { _, _, _, stage, _ in
                    guard stage != .progress else { return }
                    completions.withLock { $0 += 1 }
                    all.fulfill()
                }
            }
        }
        wait(for: [all], timeout: 120)
        XCTAssertEqual(completions.withLock { $0 }, 800)
        XCTAssertGreaterThan(shown.withLock { $0 }, 0)
    }
}
