@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// `ReentrancyTests` with heavier work inside each callback: a trim, a nested removal of everything,
/// `verify()`, `allKeys()`, `usage()`, on the same thread and on another one (which the callback's thread
/// waits for), and the callbacks `ReentrancyTests` does not reach: the progress of the `async`
/// `removeAllObjects`, and the filename closure and the archiver closures used by a trim and a removal.
/// No trap, no deadlock (each wait has a timeout), no error, and the store is consistent afterwards.
final class ReentrancyHeavyTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Heavy use of `cache`: on the calling thread, then on a thread of its own while this one waits. With
    /// `files` false it writes inline values only (inside the filename closure: a file value would call it
    /// again, without end).
    private static func work(_ cache: DiskCache, _ log: Log, files: Bool = true) {
        log.add("same thread: \(Result { () throws(KVCacheError) in try Self.operations(cache, files: files) })")
        let done = DispatchSemaphore(value: 0)
        Thread {
            log.add("other thread: \(Result { () throws(KVCacheError) in try Self.operations(cache, files: files) })")
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 30) == .timedOut { log.add("DEADLOCK") }
    }

    private static func operations(_ cache: DiskCache, files: Bool) throws(KVCacheError) -> Int {
        if files { try cache.setObject(testBytes(3_000, seed: 5), forKey: "inside-file") }
        try cache.setObject(Data([7]), forKey: "inside-inline")
        try cache.trim(toCount: 50)
        _ = try cache.allKeys()
        let report = try cache.verify()
        guard report.isHealthy else { throw .invalidArgument("verify inside a callback: \(report)") }
        _ = try cache.usage()
        try cache.removeObject(forKey: "inside-inline")
        try cache.removeAllObjects()
        return try cache.totalCount()
    }

    private static func removeAll(_ cache: DiskCache, progress: @escaping @Sendable (Int, Int) -> Void, log: Log) async {
        do throws(KVCacheError) {
            try await cache.removeAllObjects(progress: progress)
            log.add("async removeAll: success")
        } catch {
            log.add("async removeAll: failure \(error)")
        }
    }

    private func fill(_ cache: DiskCache, count: Int = 120) throws {
        for i in 0..<count { try cache.setObject(testBytes(i % 3 == 0 ? 3_000 : 40, seed: i), forKey: "k\(i)") }
    }

    private func assertClean(_ log: Log, _ cache: DiskCache, minimum: Int, file: StaticString = #filePath, line: UInt = #line) {
        let lines = log.lines
        XCTAssertGreaterThanOrEqual(lines.count, minimum, "\(lines)", file: file, line: line)
        XCTAssertFalse(lines.contains("DEADLOCK"), file: file, line: line)
        XCTAssertFalse(lines.contains { $0.contains("failure") }, "\(lines.filter { $0.contains("failure") })", file: file, line: line)
        let report = Result { () throws(KVCacheError) in try cache.verify() }
        XCTAssertEqual(try report.get().isHealthy, true, "\(report)", file: file, line: line)
        XCTAssertEqual(try report.get().unreferencedFiles, [], file: file, line: line)
    }

    func testSyncAndAsyncRemoveAllProgressMayDoHeavyWork() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        try fill(cache)
        let log = Log()
        let syncDone = expectation(description: "removeAllObjects(progress:)")
        DispatchQueue.global().async {
            let result = Result { () throws(KVCacheError) in try cache.removeAllObjects { _, _ in Self.work(cache, log) } }
            log.add("sync removeAll: \(result)")
            syncDone.fulfill()
        }
        wait(for: [syncDone], timeout: 120)
        try fill(cache)
        let asyncDone = expectation(description: "await removeAllObjects(progress:)")
        let progress: @Sendable (Int, Int) -> Void = { _, _ in Self.work(cache, log) }
        Task { @Sendable in
            await Self.removeAll(cache, progress: progress, log: log)
            asyncDone.fulfill()
        }
        wait(for: [asyncDone], timeout: 120)
        assertClean(log, cache, minimum: 2 * 2 + 2)
        XCTAssertTrue(log.lines.contains("async removeAll: success"))
    }

    func testTrimAndRemoveCompletionsMayDoHeavyWork() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        try fill(cache)
        let log = Log()
        var waits: [XCTestExpectation] = []
        func completion<T>(_ label: String) -> @Sendable (Result<T, KVCacheError>) -> Void {
            let done = expectation(description: label)
            waits.append(done)
            return { result in
                log.add("\(label): \(result)")
                Self.work(cache, log)
                done.fulfill()
            }
        }
        cache.trim(toCount: 30, completion: completion("trim count"))
        cache.trim(toCost: 10_000, completion: completion("trim cost"))
        cache.trim(toAge: 0, completion: completion("trim age"))
        cache.removeAllObjects(progress: { _, _ in Self.work(cache, log) }, completion: completion("remove all"))
        wait(for: waits, timeout: 120)
        assertClean(log, cache, minimum: waits.count * 3)
    }

    func testFilenameAndArchiverClosuresMayDoHeavyWork() throws {
        let log = Log()
        let box = Mutex<DiskCache?>(nil)
        let heavy: @Sendable () -> Void = {
            if let cache = box.withLock({ $0 }) { Self.work(cache, log, files: false) }
        }
        let archiver = DiskCacheArchiver<Data>(archive: { heavy(); return $0 }, unarchive: { heavy(); return $0 })
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        cache.filename = { key in
            heavy()
            return MD5.hex(key)
        }
        box.withLock { $0 = cache }
        let finished = expectation(description: "writes through the closures")
        DispatchQueue.global().async {
            do {
                for i in 0..<5 {
                    try cache.setObject(testBytes(4_000, seed: i), forKey: "big\(i)", archiver: archiver)
                    let back = try cache.object(forKey: "big\(i)", archiver: archiver)
                    log.add("read back \(i): \(back == testBytes(4_000, seed: i) || back == nil)")
                }
            } catch {
                log.add("failure: \(error)")
            }
            finished.fulfill()
        }
        wait(for: [finished], timeout: 120)
        box.withLock { $0 = nil }
        cache.filename = nil
        assertClean(log, cache, minimum: 5 * 2 * 2)
        XCTAssertFalse(log.lines.contains { $0.hasPrefix("read back") && $0.hasSuffix("false") }, "\(log.lines)")
    }
}
