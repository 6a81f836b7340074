@testable import KVCache
import Foundation
import XCTest

/// Review 6 (defect, suspected by the reviewer and proven here): an opener that finds the folder's `lock`
/// held exclusively waits for a shared lock. When the exclusive opener it waited for dies in its cleanup
/// (killed during a full scan), the waiter gets the shared lock with nobody else open, yet opens as a
/// non-exclusive instance: the full-scan request the dead opener left in the intent journal is skipped by the
/// work-off beside others, so the orphans it was to remove stay in `data/` (outside every total) for as long
/// as the waiter, a long-running instance, lives. A waiter now tries the exclusive lock once more after its
/// wait. The dying opener is played by a descriptor of this test holding `lock` exclusively, closed once the
/// waiter is seen blocked in `/proc/locks`.
final class KVCacheWaitingOpenerReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-waiter") }
    override func tearDownWithError() throws { try directory.remove() }

    /// Moves one `KVStorage` out of the thread that opened it (used by one thread at a time, joined).
    private final class Opened: @unchecked Sendable {
        var result: Result<KVStorage, KVCacheError>?
    }

    /// Whether `/proc/locks` shows a process blocked on a `flock` of the file with inode `inode`.
    private func hasBlockedWaiter(inode: UInt64) throws -> Bool {
        // Read to its end: `String(contentsOfFile:)` stops after the first 4 KB of a /proc file, and in a
        // full test run (hundreds of locks) the waiter's line came later: the predicate never held.
        guard let handle = FileHandle(forReadingAtPath: "/proc/locks") else { return false }
        defer { try? handle.close() }
        let locks = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return locks.split(separator: "\n").contains { $0.contains("-> FLOCK") && $0.contains(":\(inode) ") }
    }

    func testAWaiterWhoseExclusiveOpenerDiedOpensExclusivelyAndRunsTheFullScan() throws {
        let kept = testBytes(30_000, seed: 1)
        do {
            let storage = try KVStorage(path: directory.path, type: .file)
            try storage.save(key: "kept", value: kept, filename: "kept")
            storage.close()
        }
        // What an exclusive opener killed during its full scan leaves: the request, and an orphan to find.
        try Data(repeating: 7, count: 20_000).write(to: URL(fileURLWithPath: directory.path + "/data/orphan"))
        try KVStorage.requestFullScan(manifestPath: directory.path + "/manifest.sqlite")

        let lockPath = directory.path + "/lock"
        let dying = open(lockPath, O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(dying, 0)
        XCTAssertEqual(flock(dying, LOCK_EX), 0)
        var status = stat()
        XCTAssertEqual(stat(lockPath, &status), 0)

        let opened = Opened()
        let done = expectation(description: "the waiting open returns")
        let path = directory.path
        Thread {
            opened.result = Result { () throws(KVCacheError) in try KVStorage(path: path, type: .file) }
            done.fulfill()
        }.start()
        let blocked = expectation(for: NSPredicate { _, _ in (try? self.hasBlockedWaiter(inode: UInt64(status.st_ino))) ?? false },
                                  evaluatedWith: nil)
        wait(for: [blocked], timeout: 20)
        close(dying) // the exclusive opener dies: the kernel drops its lock
        wait(for: [done], timeout: 30)

        let storage = try XCTUnwrap(opened.result).get()
        defer { storage.close() }
        XCTAssertTrue(storage.openReport.ranCrashCleanup, "the waiter, alone on the folder, did not clean up: \(storage.openReport)")
        XCTAssertTrue(storage.cleanupReport.fullScan, "the dead opener's full-scan request was not honoured")
        XCTAssertEqual(try storage._checkInvariants(), [], "the orphan the full scan was to remove is still in data/")
        XCTAssertEqual(try storage.itemValue(forKey: "kept"), kept)
    }
}
