@testable import KVCache
import Foundation
import XCTest

/// Review (defect, minor): the process runs out of file descriptors at each step of an open in turn (the soft
/// `RLIMIT_NOFILE` is lowered, the table filled, then 0, 1, 2, … descriptors freed), on a store that was
/// closed cleanly. Every failed open must be a thrown `KVCacheError`; afterwards, with descriptors back, the
/// store opens without a rebuild, with every value intact, and — since no instance died — as after a clean
/// shutdown, without the crash cleanup ("the crash cleanup runs iff some instance died without close").
/// Held: no rebuild, nothing lost, typed errors (CANTOPEN, EMFILE) at every step. Broken: EMFILE in the
/// exclusive opener's `removeTemporaries()` (`opendir` of `tmp/`, after the manifest opened) fails the init
/// after the slot was marked open; the failed init's `close()` leaves the slot "o" (`isCountedOpen` false),
/// so the next open takes a transient EMFILE for a death: `quick_check` and the crash cleanup run.
final class KVCacheDescriptorExhaustionReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testOutOfDescriptorsAtEachStepOfAnOpenIsNeitherACrashNorDamage() throws {
        let fileValue = Data(repeating: 5, count: 30_000), inlineValue = Data(repeating: 6, count: 100)
        do {
            let storage = try KVStorage(path: directory.path, type: .mixed)
            try storage.save(key: "file", value: fileValue, filename: "file-value")
            try storage.save(key: "inline", value: inlineValue)
            storage.close()
        }
        var limit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        let saved = limit
        defer { var restore = saved; _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restore) }

        var failures: [String] = []
        for spare in 0..<24 {
            var lowered = saved
            lowered.rlim_cur = min(saved.rlim_cur, 1_024)
            XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered), 0)
            var held: [Int32] = []
            while true {
                let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                if fd < 0 { break }
                held.append(fd)
            }
            for _ in 0..<min(spare, held.count) { close(held.removeLast()) }
            let attempt = Result { () throws(KVCacheError) -> KVStorage in try KVStorage(path: directory.path, type: .mixed) }
            if case .success(let storage) = attempt { storage.close() }
            for fd in held { close(fd) }
            var restore = saved
            XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restore), 0)

            let check = try KVStorage(path: directory.path, type: .mixed)
            defer { check.close() }
            let outcome: String
            switch attempt {
            case .success: outcome = "opened"
            case .failure(let error): outcome = "\(error)"
            }
            if check.recoveryError != nil { failures.append("\(spare) spare (\(outcome)): the next open rebuilt: \(check.recoveryError!)") }
            if try check.itemValue(forKey: "file") != fileValue || check.itemValue(forKey: "inline") != inlineValue {
                failures.append("\(spare) spare (\(outcome)): a value was lost")
            }
            if !check.openReport.previousShutdownWasClean || check.openReport.ranCrashCleanup {
                failures.append("\(spare) spare (\(outcome)): no instance died, yet the next open saw \(check.openReport)")
            }
            if case .success = attempt { break }
        }
        XCTAssertEqual(failures, [])
    }
}
