@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67): a second process appends to `access_log` (in small transactions, as
/// its flushes do) while this one folds with short and odd steps: every time lands, exactly, and the log drains.
final class KVCacheFoldTwoProcessReviewTests: XCTestCase {
    static let keys = (0..<40).map { "key-\($0)" } + ["", "a\u{0}", "\u{e9}", "e\u{301}"]
    static let appends = 3_000

    /// The appender's rows: (key index, time offset above the base), the same in both processes.
    static func plan() -> [(Int, Int64)] {
        var rng = SplitMix64(seed: 4_242)
        return (0..<appends).map { n in (rng.next(upTo: keys.count), 1 + Int64(rng.next(upTo: 1_000_000)) * 10 + Int64(n % 10)) }
    }

    /// Worker side: runs only when re-executed by the parent (`KVCACHE_FOLD_PAIR_PATH` set).
    func testAppenderWorker() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_FOLD_PAIR_PATH"], let base = environment["KVCACHE_FOLD_PAIR_BASE"].flatMap(Int64.init)
        else { throw XCTSkip("fold appender: runs only inside testFoldsMeetAnotherProcesssAppends") }
        let storage = try KVStorage(path: path, type: .sqlite)
        defer { storage.close() }
        emitLine("READY")
        awaitStartSignal()
        let plan = Self.plan()
        var index = 0
        while index < plan.count {
            let end = min(plan.count, index + 1 + index % 9)
            storage.endReadSnapshot()
            try storage.database.execute("BEGIN IMMEDIATE")
            for (key, offset) in plan[index..<end] { try storage.reviewFoldAppend(Self.keys[key], time: base + offset) }
            try storage.database.execute("COMMIT")
            index = end
            // A pause between transactions, as between flushes: SQLite's busy handler sleeps, so an appender
            // that begins again at once would take every turn and the folds would meet its rows only at the end.
            usleep(500)
        }
        emitLine("APPENDED \(plan.count)")
    }

    func testFoldsMeetAnotherProcesssAppends() throws {
        let directory = try TemporaryDirectory("kvcache-fold-pair")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        for (i, key) in Self.keys.enumerated() { try storage.save(key: key, value: testBytes(8, seed: i)) }
        try storage.applyAccessTimes()
        var base: Int64 = 0
        for key in Self.keys { base = max(base, try XCTUnwrap(try storage.reviewFoldManifestTime(key))) }
        let worker = try ChildProcess(test: "KVCacheTests.KVCacheFoldTwoProcessReviewTests/testAppenderWorker",
                                      environment: ["KVCACHE_FOLD_PAIR_PATH": directory.path, "KVCACHE_FOLD_PAIR_BASE": "\(base)"])
        XCTAssertTrue(worker.waitUntilReady(timeout: 60))
        try worker.send("go")
        let durations: [Double] = [0, -1, .nan, 1e-5, .infinity, KVStorage.defaultStepDuration]
        var folds = 0, foundRows = 0
        while worker.process.isRunning {
            storage.stepDuration = durations[folds % durations.count]
            if try storage.foldAccessLogBatch() { foundRows += 1 } else { usleep(200) }
            folds += 1
        }
        // The folds met the appends (the appender takes hundreds of transactions).
        XCTAssertGreaterThan(foundRows, 0, "no fold ran while the other process appended")
        print("KVCacheFoldTwoProcessReviewTests: \(foundRows) of \(folds) folds found rows while the other process ran")
        let lines = worker.finish()
        XCTAssertEqual(worker.process.terminationStatus, 0)
        XCTAssertTrue(lines.contains("APPENDED \(Self.appends)"), "\(lines.suffix(5))")
        storage.stepDuration = 0
        let last = try storage.reviewFoldAll(limit: Self.appends + 10)
        XCTAssertEqual(try storage.accessLogLength(), 0)
        var newest: [Int: Int64] = [:]
        for (key, offset) in Self.plan() { newest[key] = max(newest[key] ?? .min, base + offset) }
        for (i, key) in Self.keys.enumerated() {
            XCTAssertEqual(try storage.reviewFoldManifestTime(key), newest[i], "\(key.debugDescription) after \(folds) + \(last) folds")
        }
    }
}
