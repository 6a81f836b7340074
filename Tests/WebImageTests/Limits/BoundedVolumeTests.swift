import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// Volume through one manager with default settings, in a child process (this test binary, run again on one
/// test with `WEBIMAGE_VOLUME_CHILD=1`) whose peak RSS comes from `wait4` (`MeasuredProcess`):
/// - 64 concurrent requests for different 8000 × 8000 images (full decodes: 64 Mpx is within the default
///   75 Mpx): peak RSS within the decode budget plus the memory cache's limit (plus the process's baseline);
/// - 2,000 distinct 1000 × 1000 images: RSS plateaus under the default memory cache limit, and the disk cache
///   stays within its limits.
/// The images are mid-gray JPEGs made directly (`DecodeBombs.grayJPEG`), served under distinct URLs.
final class BoundedVolumeTests: XCTestCase {
    /// What a child process adds to the caches and the decodes: the test runner, XCTest, the loopback server,
    /// libcurl, SQLite and the encoded bodies in flight.
    static let baseline = 256 << 20

    private static var isChild: Bool { ProcessInfo.processInfo.environment["WEBIMAGE_VOLUME_CHILD"] == "1" }

    /// Runs `test` of this class in a child process and returns its peak RSS and the numbers it printed.
    private func runChild(_ test: String, environment: [String: String] = [:]) throws -> (run: MeasuredProcess.Run, values: [String: Int]) {
        let run = try MeasuredProcess.run(MeasuredProcess.testBinary, ["WebImageTests.BoundedVolumeTests/\(test)"],
                                  environment: environment.merging(["WEBIMAGE_VOLUME_CHILD": "1"]) { $1 })
        var values: [String: Int] = [:]
        for line in (run.stdout + run.stderr).split(separator: "\n") where line.hasPrefix("VOLUME ") {
            for field in line.dropFirst(7).split(separator: " ") {
                let pair = field.split(separator: "=")
                if pair.count == 2, let value = Int(pair[1]) { values[String(pair[0])] = value }
            }
        }
        XCTAssertEqual(run.status, 0, "child failed:\n\(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        return (run, values)
    }

    /// Requests every URL at once and waits; returns how many finished with an image of `size` × `size`.
    private static func loadAll(_ urls: [URL], manager: ImageManager, size: Int,
                                each: (@Sendable (Int) -> Void)? = nil) -> Int {
        let group = DispatchGroup()
        let good = Mutex(0)
        let done = Mutex(0)
        for url in urls {
            group.enter()
            manager.requestImage(url: url) { image, _, _, stage, error in
                guard stage != .progress else { return }
                if let image, image.width == size, image.height == size { good.withLock { $0 += 1 } }
                else { print("VOLUME-FAILURE \(url.path) \(stage) \(String(describing: error))") }
                let count = done.withLock { $0 += 1; return $0 }
                each?(count)
                group.leave()
            }
        }
        group.wait()
        return good.withLock { $0 }
    }

    /// In the child: one gray JPEG of `side` × `side` served by a loopback server under `count` URLs, and a
    /// temporary cache folder, both removed after `body`.
    private static func serving(count: Int, side: Int, _ body: ([URL], URL) throws -> Void) throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("volume-\(UUID().uuidString)")
        defer { do { try FileManager.default.removeItem(at: directory) } catch { print("cleanup: \(error)") } }
        let jpeg = DecodeBombs.grayJPEG(width: side, height: side)
        let urls = (0..<count).map { i -> URL in
            server.route("/img/\(i).jpg", .bytes(jpeg, contentType: "image/jpeg"))
            return server.url("/img/\(i).jpg")
        }
        try body(urls, directory)
    }

    /// VmRSS of this process in bytes.
    private static func currentRSS() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) * 1024
        }
        return 0
    }

    func testSixtyFourConcurrent8000x8000ImagesStayWithinTheDecodeBudgetPlusCaches() throws {
        if Self.isChild {
            try Self.serving(count: 64, side: 8000) { urls, directory in
            let manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 64))
            let overBudget = Mutex(0)
            let budget = manager.decodeBudget
            let good = Self.loadAll(urls, manager: manager, size: 8000) { _ in
                if budget.bytesInUse > budget.capacity, budget.runningCount > 1 { overBudget.withLock { $0 += 1 } }
            }
            XCTAssertEqual(good, 64)
            XCTAssertEqual(overBudget.withLock { $0 }, 0)
            print("VOLUME budget=\(budget.capacity) cache=\(manager.cache!.memoryCache.costLimit) kept=\(manager.cache!.memoryCache.totalCost)")
            }
            return
        }
        let (run, values) = try runChild(#function.replacingOccurrences(of: "()", with: ""))
        let budget = try XCTUnwrap(values["budget"]), cache = try XCTUnwrap(values["cache"])
        let bound = budget + cache + Self.baseline
        print(String(format: "HOSTILE 64 concurrent 8000x8000 JPEG | all decoded | %.1f s | %.0f MB peak RSS (bound %.0f MB)",
                     run.seconds, run.peakMB, Double(bound) / 1e6))
        XCTAssertLessThanOrEqual(run.peakRSS, bound, "peak RSS over decode budget + memory cache + baseline")
    }

    func testTwoThousandDistinctImagesPlateauUnderTheMemoryLimitAndDiskStaysWithinItsLimits() throws {
        if Self.isChild {
            try Self.serving(count: 2000, side: 1000) { urls, directory in
            let cache = try ImageCache(path: directory.path)
            let manager = ImageManager(cache: cache, queue: FetchQueue(maxConcurrentTransfers: 6))
            let samples = Mutex<[Int: Int]>([:])
            let good = Self.loadAll(urls, manager: manager, size: 1000) { count in
                if count % 500 == 0 { samples.withLock { $0[count] = Self.currentRSS() } }
            }
            XCTAssertEqual(good, 2000)
            cache.waitForPendingWrites()
            try cache.diskCache!.trimToLimits()
            let usage = try cache.diskCache!.usage()
            let rss = samples.withLock { $0 }
            XCTAssertLessThanOrEqual(cache.memoryCache.totalCost, cache.memoryCache.costLimit)
            XCTAssertLessThanOrEqual(usage.totalBytes, cache.diskCache!.costLimit)
            XCTAssertEqual(usage.entryCount, 2000)
            print("VOLUME cache=\(cache.memoryCache.costLimit) kept=\(cache.memoryCache.totalCost) disk=\(usage.totalBytes) "
                + "diskLimit=\(cache.diskCache!.costLimit) rss1000=\(rss[1000] ?? 0) rss2000=\(rss[2000] ?? 0)")
            }
            return
        }
        // The default allocator, as a service runs it: bitmaps of 1 MiB or more are mapped by PixelStorage, so an
        // evicted one is returned to the system at once. (With glibc's heap, peak RSS reached ~1.5 GB here for an
        // 805 MB cache: glibc raises its mmap threshold after the first large free.)
        let (run, values) = try runChild(#function.replacingOccurrences(of: "()", with: ""))
        let cache = try XCTUnwrap(values["cache"])
        let bound = cache + Self.baseline
        let (half, end) = (try XCTUnwrap(values["rss1000"]), try XCTUnwrap(values["rss2000"]))
        print(String(format: "HOSTILE 2000 distinct 1000x1000 JPEG | all decoded | %.1f s | %.0f MB peak RSS (memory limit %.0f MB; RSS %.0f MB at 1000, %.0f MB at 2000; disk %d bytes)",
                     run.seconds, run.peakMB, Double(cache) / 1e6, Double(half) / 1e6, Double(end) / 1e6, values["disk"] ?? -1))
        XCTAssertLessThanOrEqual(run.peakRSS, bound, "peak RSS over the memory cache limit + baseline")
        XCTAssertLessThanOrEqual(end, half + 64 << 20, "RSS keeps growing after the cache filled: no plateau")
        XCTAssertLessThanOrEqual(try XCTUnwrap(values["disk"]), try XCTUnwrap(values["diskLimit"]))
    }
}
