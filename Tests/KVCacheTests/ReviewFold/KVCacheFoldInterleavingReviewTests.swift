@testable import KVCache
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67): appends that arrive between folds, from another instance on the same
/// folder in this process (its own connection), while this one folds with short or odd steps: every time lands,
/// the log drains, no fold returns `true` forever.
final class KVCacheFoldInterleavingReviewTests: XCTestCase {
    func testAppendsFromAnotherInstanceBetweenFoldsAllLand() throws {
        let directory = try TemporaryDirectory("kvcache-fold-interleave")
        defer { try? directory.remove() }
        let folder = try KVStorage(path: directory.path, type: .sqlite)
        defer { folder.close() }
        let keys = (0..<50).map { "key-\($0)" } + ["", "a\u{0}", "\u{e9}", "e\u{301}"]
        for (i, key) in keys.enumerated() { try folder.save(key: key, value: testBytes(8, seed: i)) }
        try folder.applyAccessTimes()
        var base: Int64 = 0
        for key in keys { base = max(base, try XCTUnwrap(try folder.reviewFoldManifestTime(key))) }
        let appender = try KVStorage(path: directory.path, type: .sqlite)
        defer { appender.close() }
        let appends = 4_000
        // Each append's time is unique and its order random, so the newest of a key is anywhere in the log.
        var rng = SplitMix64(seed: 31)
        let plan: [(String, Int64)] = (0..<appends).map { n in
            (keys[rng.next(upTo: keys.count)], base + 1 + Int64(rng.next(upTo: 1_000_000)) * 10 + Int64(n % 10))
        }
        let done = Atomic(false)
        nonisolated(unsafe) let appenderRef = appender
        let thread = Thread {
            do {
                // In small transactions, as flushes append.
                var index = 0
                while index < plan.count {
                    let end = min(plan.count, index + 1 + index % 7)
                    appenderRef.endReadSnapshot()
                    try appenderRef.database.execute("BEGIN IMMEDIATE")
                    for (key, time) in plan[index..<end] { try appenderRef.reviewFoldAppend(key, time: time) }
                    try appenderRef.database.execute("COMMIT")
                    index = end
                }
            } catch {
                XCTFail("appender: \(error)")
            }
            done.store(true, ordering: .releasing)
        }
        thread.start()
        let durations: [Double] = [0, -1, .nan, 1e-5, .infinity, KVStorage.defaultStepDuration]
        var folds = 0
        while !done.load(ordering: .acquiring) {
            folder.stepDuration = durations[folds % durations.count]
            _ = try folder.foldAccessLogBatch()
            folds += 1
        }
        folder.stepDuration = 0
        let last = try folder.reviewFoldAll(limit: appends + 10)
        XCTAssertEqual(try folder.accessLogLength(), 0)
        // By exact bytes: `String` equality is canonical equivalence ("\u{e9}" == "e\u{301}").
        var newest: [Data: Int64] = [:]
        for (key, time) in plan { newest[Data(key.utf8)] = max(newest[Data(key.utf8)] ?? .min, time) }
        for key in keys {
            XCTAssertEqual(try folder.reviewFoldManifestTime(key), newest[Data(key.utf8)], "\(key.debugDescription) after \(folds) + \(last) folds")
        }
    }
}
