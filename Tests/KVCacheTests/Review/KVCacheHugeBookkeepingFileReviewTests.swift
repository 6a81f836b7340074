@testable import KVCache
import Foundation
import XCTest

/// Review (defect): the open reads `<path>/instances` (`InstanceSlots.readWhole`, from `scan()` and
/// `claim()`) and the intent journal in `<path>/write.lock` (`journaledNames`, in the crash cleanup) whole
/// into one array of the file's `st_size` bytes, with no bound. A damaged (huge, e.g. a sparse 1 TB file
/// after a file-system fault or a stray `truncate`) bookkeeping file makes the allocation fail and the
/// process crash at open — house rule "bad input → a clear typed error, never a crash". Each case runs the
/// open in a child process (the crash would take the test runner down) and requires it to come back:
/// opened, or a `KVCacheError`.
final class KVCacheHugeBookkeepingFileReviewTests: XCTestCase {
    /// Child side: opens the store at `KVCACHE_HUGE_PATH` and prints what happened.
    func testChildOpen() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_HUGE_PATH"]
        else { throw XCTSkip("child: runs only inside KVCacheHugeBookkeepingFileReviewTests") }
        do {
            let storage = try KVStorage(path: path, type: .file)
            let value = try storage.itemValue(forKey: "k")
            emitLine("OPENED \(value?.count ?? -1)")
            storage.close()
        } catch {
            emitLine("THREW \(error)")
        }
    }

    private func openInChild(afterGrowing file: String) throws {
        let directory = try TemporaryDirectory()
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "k", value: Data(repeating: 3, count: 1_000), filename: "k-file")
        storage.close()
        XCTAssertEqual(truncate(directory.path + "/" + file, 1 << 40), 0, "truncate: errno \(errno)")

        let child = try ChildProcess(test: "KVCacheTests.KVCacheHugeBookkeepingFileReviewTests/testChildOpen",
                                     environment: ["KVCACHE_HUGE_PATH": directory.path])
        let lines = child.finish()
        XCTAssertEqual(child.process.terminationReason, .exit,
                       "the open with a 1 TB \(file) crashed the process (signal \(child.process.terminationStatus)); output: \(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("OPENED") || $0.hasPrefix("THREW") }, "child output: \(lines)")

        // Nothing stored is lost once the file is repaired (here: back to its normal size).
        XCTAssertEqual(truncate(directory.path + "/" + file, 0), 0)
        let again = try KVStorage(path: directory.path, type: .file)
        defer { again.close() }
        XCTAssertEqual(try again.itemValue(forKey: "k"), Data(repeating: 3, count: 1_000))
    }

    func testAHugeInstancesFileIsAnErrorNotACrash() throws { try openInChild(afterGrowing: "instances") }

    func testAHugeIntentJournalIsAnErrorNotACrash() throws { try openInChild(afterGrowing: "write.lock") }
}
