@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// Every callback the module takes (progress, completion, archiver closures, the filename closure, the
/// promotion cost, the memory-warning callback) may use the same cache, from its own thread and from
/// another one: no trap ("Recursive call to lock Mutex"), no deadlock (each waits with a timeout).
final class ReentrancyTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Uses `cache` from the calling thread, then from another thread while this one waits for it (what
    /// `ImageCache.waitForPendingWrites()` does), and records what it saw.
    private static func touch(_ cache: DiskCache, _ log: Log) {
        log.add("same thread: \(Result { () throws(KVCacheError) in try cache.containsObject(forKey: "probe") })")
        let done = DispatchSemaphore(value: 0)
        // A thread of its own: a blocked pool thread waiting for another pool thread is slow to get one.
        Thread {
            log.add("other thread: \(Result { () throws(KVCacheError) in try cache.setObject(Data([9]), forKey: "probe") })")
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 20) == .timedOut { log.add("DEADLOCK") }
    }

    private func fill(_ cache: DiskCache, count: Int = 200) throws {
        for i in 0..<count { try cache.setObject(testBytes(i % 3 == 0 ? 3_000 : 40, seed: i), forKey: "k\(i)") }
    }

    private func assertClean(_ log: Log, minimum: Int, file: StaticString = #filePath, line: UInt = #line) {
        let lines = log.lines
        XCTAssertGreaterThanOrEqual(lines.count, minimum, "\(lines)", file: file, line: line)
        XCTAssertFalse(lines.contains("DEADLOCK"), file: file, line: line)
        XCTAssertFalse(lines.contains { $0.contains("failure") }, "\(lines.filter { $0.contains("failure") })", file: file, line: line)
    }

    /// Runs `body` on another thread and fails (instead of hanging) if it does not finish.
    private func finishes(_ label: String, timeout: Double = 60, _ body: @escaping @Sendable () -> Void) {
        let finished = expectation(description: label)
        DispatchQueue.global().async {
            body()
            finished.fulfill()
        }
        wait(for: [finished], timeout: timeout)
    }

    func testRemoveAllProgressMayUseTheCache() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        try fill(cache)
        let log = Log()
        finishes("removeAllObjects(progress:)") {
            let result = Result { () throws(KVCacheError) in try cache.removeAllObjects { _, _ in Self.touch(cache, log) } }
            log.add("removeAll: \(result)")
        }
        assertClean(log, minimum: 3 * 2)
        // Every value there at the start is gone; what the progress handler wrote may stay.
        XCTAssertEqual(try cache.allKeys().filter { $0 != "probe" }, [])
    }

    func testAsyncRemoveAllProgressAndCompletionMayUseTheCache() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        try fill(cache)
        let log = Log()
        let completed = expectation(description: "completion")
        cache.removeAllObjects(progress: { _, _ in Self.touch(cache, log) }) { result in
            log.add("completion: \(result)")
            Self.touch(cache, log)
            completed.fulfill()
        }
        wait(for: [completed], timeout: 60)
        assertClean(log, minimum: 4 * 2)
    }

    func testCompletionHandlersMayUseTheCache() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        try fill(cache, count: 20)
        let log = Log()
        var waits: [XCTestExpectation] = []
        func completion<T>(_ label: String) -> @Sendable (Result<T, KVCacheError>) -> Void {
            let done = expectation(description: label)
            waits.append(done)
            return { result in
                log.add("\(label): \(result)")
                Self.touch(cache, log)
                done.fulfill()
            }
        }
        cache.containsObject(forKey: "k1", completion: completion("contains"))
        cache.object(forKey: "k1", completion: completion("object"))
        cache.setObject(Data([1]), forKey: "k2", completion: completion("set"))
        cache.removeObject(forKey: "k3", completion: completion("remove"))
        cache.totalCount(completion: completion("count"))
        cache.totalCost(completion: completion("cost"))
        cache.trim(toCount: 15, completion: completion("trim count"))
        cache.trim(toCost: 100_000, completion: completion("trim cost"))
        cache.trim(toAge: 3_600, completion: completion("trim age"))
        wait(for: waits, timeout: 60)
        assertClean(log, minimum: waits.count * 3)
    }

    func testArchiverFilenameAndPromotionClosuresMayUseTheCache() throws {
        let log = Log()
        let box = Mutex<Cache<Data>?>(nil)
        let touchDisk: @Sendable () -> Void = {
            if let cache = box.withLock({ $0 }) { Self.touch(cache.diskCache, log) }
        }
        let archiver = DiskCacheArchiver<Data>(archive: { touchDisk(); return $0 }, unarchive: { touchDisk(); return $0 })
        let cache = try Cache<Data>(path: directory.path, inlineThreshold: 100, archiver: archiver,
                                    promotionCost: { _, data in touchDisk(); return data.count })
        box.withLock { $0 = cache }
        cache.diskCache.filename = { key in
            touchDisk()
            return MD5.hex(key)
        }
        finishes("archive, filename, unarchive, promotion") {
            do {
                try cache.setObject(testBytes(5_000, seed: 1), forKey: "big")
                cache.memoryCache.removeAllObjects()
                log.add("read back: \(try cache.object(forKey: "big") == testBytes(5_000, seed: 1))")
                try cache.diskCache.setObject(Data([3]), forKey: "archived", archiver: archiver)
                log.add("archived: \(try cache.diskCache.object(forKey: "archived", archiver: archiver) == Data([3]))")
            } catch {
                log.add("failure: \(error)")
            }
        }
        assertClean(log, minimum: 8)
        XCTAssertTrue(log.lines.contains("read back: true"))
        XCTAssertTrue(log.lines.contains("archived: true"))
        box.withLock { $0 = nil }
    }

    func testCacheRemoveAllProgressAndMemoryWarningCallbackMayUseTheCache() throws {
        let cache = try Cache<Data>(path: directory.path, inlineThreshold: 1_000)
        for i in 0..<150 { try cache.setObject(testBytes(50, seed: i), forKey: "k\(i)") }
        let log = Log()
        let disk = cache.diskCache
        let memory = cache.memoryCache
        memory.didReceiveMemoryWarning = { memory in
            memory.setObject(Data([1]), forKey: "after-warning")
            Self.touch(disk, log)
        }
        finishes("Cache.removeAllObjects(progress:) and the memory warning") {
            let result = Result { () throws(KVCacheError) in try cache.removeAllObjects { _, _ in Self.touch(disk, log) } }
            log.add("removeAll: \(result)")
            memory.handleMemoryWarning()
        }
        assertClean(log, minimum: 5)
        XCTAssertEqual(memory.object(forKey: "after-warning"), Data([1]))
    }

    /// `KVStorage` is single-threaded and lock-free: its progress handler may use the store on its thread.
    func testKVStorageRemoveAllProgressMayUseTheStore() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for i in 0..<200 { try storage.save(key: "k\(i)", value: testBytes(10, seed: i)) }
        var counts: [Int] = []
        try storage.removeAllItems { removed, total in
            counts.append(Result { () throws(KVCacheError) in try storage.itemsCount() }.map { $0 + removed }.get(or: -1))
            XCTAssertEqual(total, 200)
        }
        XCTAssertEqual(Set(counts), [200])
        XCTAssertEqual(try storage.itemsCount(), 0)
    }
}

/// Lines from callbacks on any thread. Thread-safe (a lock).
final class Log: Sendable {
    private let storage = Mutex<[String]>([])
    func add(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}

extension Result {
    /// The success value, or `fallback` on failure.
    func get(or fallback: Success) -> Success { (try? get()) ?? fallback }
}
