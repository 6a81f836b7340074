@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67): attacks on what a fold promises, whatever its step: each key ends with
/// the newest of its manifest time and its logged times (an older logged time, from before the key was saved
/// again, is ignored), keys are folded apart by their exact bytes (empty, NUL inside or at the end, 100 KB,
/// every Unicode plane, NFC vs NFD, text that is not valid UTF-8), a fold never deletes a row it did not apply,
/// never returns `true` forever, and stops at `through` even in the middle of a key's rows.
final class KVCacheFoldExactnessReviewTests: XCTestCase {
    /// The durations a fold is attacked with: none, negative, NaN, infinite, the default.
    static let durations: [Double] = [0, -1, .nan, .infinity, -.infinity, KVStorage.defaultStepDuration]

    /// Keys stored through the API.
    static let apiKeys: [String] = {
        var keys = ["", "\u{0}", "a\u{0}", "a\u{0}b", "a\u{0}c", "a", "\u{e9}", "e\u{301}", "\u{c5}", "\u{212b}", "A\u{30a}",
                    "\u{fffd}a", "\u{41}\u{4e2d}", "\u{1f600}", "\u{20000}", "\u{30000}", "\u{e0001}", "\u{f0000}",
                    "\u{10fffd}", "\u{feff}x", "x\u{200d}"]
        let long = String(repeating: "L", count: 100_000)
        keys += [long, long + "\u{0}", long + "x", String(repeating: "\u{1f600}", count: 25_000)]
        return keys
    }()

    /// Keys written only with raw SQL (as SQL expressions): text whose bytes are not valid UTF-8. `x'ff61'`
    /// read back as a `String` is repaired to "\u{fffd}a", a key of `apiKeys`.
    static let rawKeys = ["CAST(x'ff61' AS TEXT)", "CAST(x'ff62' AS TEXT)", "CAST(x'c3' AS TEXT)", "CAST(x'6100ff' AS TEXT)"]

    private struct Fixture {
        let storage: KVStorage
        /// Manifest time before the log is folded, by key (API keys by their string, raw keys by their SQL),
        /// by exact bytes (`String` equality is canonical equivalence: "\u{e9}" == "e\u{301}").
        var base: [Data: Int64] = [:]
        /// What each key must end with.
        var expected: [Data: Int64] = [:]
    }

    private func makeFixture(_ directory: TemporaryDirectory) throws -> Fixture {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        for (i, key) in Self.apiKeys.enumerated() { try storage.save(key: key, value: testBytes(8, seed: i)) }
        try storage.applyAccessTimes()
        var fixture = Fixture(storage: storage)
        for key in Self.apiKeys { fixture.base[Data(key.utf8)] = try XCTUnwrap(try storage.reviewFoldManifestTime(key), key.debugDescription) }
        storage.endReadSnapshot()
        let now = fixture.base.values.max() ?? 0
        for (i, sqlKey) in Self.rawKeys.enumerated() {
            try storage.database.execute("""
                INSERT INTO manifest (key, filename, size, inline_data, modification_time, last_access_time)
                VALUES (\(sqlKey), NULL, 1, x'00', \(now), \(now + Int64(i)))
                """)
            fixture.base[Data(sqlKey.utf8)] = now + Int64(i)
        }
        return fixture
    }

    /// The manifest time of `name` (an API key, or a raw key's SQL).
    private func manifestTime(_ storage: KVStorage, _ name: String) throws -> Int64? {
        Self.rawKeys.contains(name) ? try storage.reviewFoldManifestTime(sqlKey: name) : try storage.reviewFoldManifestTime(name)
    }

    /// Appends a log row for `name` with `time`.
    private func append(_ storage: KVStorage, _ name: String, _ time: Int64) throws {
        if Self.rawKeys.contains(name) {
            try storage.database.execute("INSERT INTO access_log (key, time) VALUES (\(name), \(time))")
        } else {
            try storage.reviewFoldAppend(name, time: time)
        }
    }

    func testEveryKeyEndsWithItsNewestTimeWhateverTheStep() throws {
        var rng = SplitMix64(seed: 20_261_127)
        for duration in Self.durations {
            let directory = try TemporaryDirectory("kvcache-fold-exact")
            defer { try? directory.remove() }
            var fixture = try makeFixture(directory)
            let storage = fixture.storage
            defer { storage.close() }
            let names = Self.apiKeys + Self.rawKeys
            // 3 to 6 rows per key, shuffled across the log (duplicates span batches), about a third of them
            // older than the key's manifest time (a read from before the key was saved again).
            var rows: [(String, Int64)] = []
            for name in names {
                let base = fixture.base[Data(name.utf8)]!
                for _ in 0..<(3 + rng.next(upTo: 4)) {
                    let delta = Int64(rng.next(upTo: 3_000)) - 1_000
                    rows.append((name, base + delta))
                }
            }
            rows.shuffle(using: &rng)
            for (name, time) in rows {
                let id = Data(name.utf8)
                fixture.expected[id] = max(fixture.expected[id] ?? fixture.base[id]!, time)
            }
            storage.endReadSnapshot()
            for (name, time) in rows { try append(storage, name, time) }
            // Enough rows for several batches: the shuffled rows again, 5,000 µs older (they change nothing).
            for _ in 0..<3 { for (name, time) in rows { try append(storage, name, time - 5_000) } }
            storage.stepDuration = duration
            var folds = 0
            var previous = try storage.reviewFoldLog()
            while try storage.foldAccessLogBatch() {
                folds += 1
                let now = try storage.reviewFoldLog()
                XCTAssertLessThan(now.count, previous.count, "duration \(duration): a fold returned true without folding a row")
                // Folded rows are the oldest: what is left is a suffix of what was there.
                XCTAssertEqual(now.map(\.rowid), Array(previous.map(\.rowid).suffix(now.count)), "duration \(duration)")
                previous = now
                if folds > 10_000 { XCTFail("duration \(duration): folds never end"); break }
            }
            XCTAssertTrue(previous.isEmpty)
            for name in names {
                XCTAssertEqual(try manifestTime(storage, name), fixture.expected[Data(name.utf8)],
                               "duration \(duration): key \(name.prefix(40).debugDescription) (\(name.utf8.count) bytes)")
            }
        }
    }

    /// A fold cut short after any row never loses a time it deleted: after each one-row fold, the manifest
    /// time of every key is at least the newest time among the rows deleted so far.
    func testNoFoldDeletesARowItDidNotApply() throws {
        let directory = try TemporaryDirectory("kvcache-fold-exact-deleted")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let keys = (0..<40).map { "key-\($0)" }
        for (i, key) in keys.enumerated() { try storage.save(key: key, value: testBytes(8, seed: i)) }
        try storage.applyAccessTimes()
        var base: [String: Int64] = [:]
        for key in keys { base[key] = try XCTUnwrap(try storage.reviewFoldManifestTime(key)) }
        var rng = SplitMix64(seed: 77)
        var logged: [(String, Int64)] = []
        for _ in 0..<700 {
            let key = keys[rng.next(upTo: keys.count)]
            logged.append((key, base[key]! + Int64(rng.next(upTo: 10_000)) - 2_000))
        }
        for (key, time) in logged { try storage.reviewFoldAppend(key, time: time) }
        let firstRowid = try XCTUnwrap(try storage.reviewFoldLog().first?.rowid)
        var folds = 0
        storage.stepDuration = 0
        while try storage.foldAccessLogBatch() {
            folds += 1
            // Alternate the step so cuts land everywhere.
            storage.stepDuration = [0, 0.0001, 0.0003, .infinity][folds % 4]
            let left = try storage.reviewFoldLog()
            let deleted = logged.count - left.count
            XCTAssertEqual(left.first?.rowid ?? firstRowid + Int64(logged.count), firstRowid + Int64(deleted))
            var newest: [String: Int64] = [:]
            for (key, time) in logged.prefix(deleted) { newest[key] = max(newest[key] ?? .min, time) }
            for (key, time) in newest {
                XCTAssertGreaterThanOrEqual(try storage.reviewFoldManifestTime(key)!, time,
                                            "fold \(folds): \(key)'s row was deleted with its time unapplied")
            }
            XCTAssertLessThan(folds, 5_000)
            if folds >= 5_000 { break }
        }
        for key in keys {
            let newest = logged.filter { $0.0 == key }.map(\.1).max() ?? .min
            XCTAssertEqual(try storage.reviewFoldManifestTime(key), max(base[key]!, newest), key)
        }
    }

    /// A fold through a rowid in the middle of a key's rows applies only that key's times up to there; the
    /// rows after stay for the next fold (a trim orders by the reads up to its start, `TrimLimits.foldThrough`).
    func testAFoldStopsAtThroughInTheMiddleOfAKeysRows() throws {
        try forEachDurationWithABC("kvcache-fold-exact-through") { duration, storage, base in
            // a@+100, b@+200, a@+300 | c@+50, a@+400
            for (key, delta) in [("a", 100), ("b", 200), ("a", 300), ("c", 50), ("a", 400)] {
                try storage.reviewFoldAppend(key, time: base + Int64(delta))
            }
            let rowids = try storage.reviewFoldLog().map(\.rowid)
            storage.stepDuration = duration
            var folds = 0
            while try storage.foldAccessLogBatch(through: rowids[1]) { folds += 1; XCTAssertLessThan(folds, 10) }
            XCTAssertEqual(try storage.reviewFoldManifestTime("a"), base + 100, "duration \(duration): a folded past through")
            XCTAssertEqual(try storage.reviewFoldManifestTime("b"), base + 200, "duration \(duration)")
            XCTAssertEqual(try storage.reviewFoldLog().map(\.rowid), Array(rowids[2...]), "duration \(duration)")
            while try storage.foldAccessLogBatch(through: rowids[3]) { folds += 1; XCTAssertLessThan(folds, 20) }
            XCTAssertEqual(try storage.reviewFoldManifestTime("a"), base + 300, "duration \(duration)")
            XCTAssertEqual(try storage.reviewFoldManifestTime("c"), base + 50, "duration \(duration)")
            XCTAssertFalse(try storage.foldAccessLogBatch(through: rowids[3]))
            _ = try storage.reviewFoldAll()
            XCTAssertEqual(try storage.reviewFoldManifestTime("a"), base + 400, "duration \(duration)")
        }
    }

    /// Rowid gaps (rows deleted from the middle, explicit rowids far apart, a gap wider than a batch): each
    /// fold makes progress, the log drains, every time lands.
    func testRowidGapsDrainExactly() throws {
        try forEachDurationWithABC("kvcache-fold-exact-gaps") { duration, storage, base in
            storage.endReadSnapshot()
            for (rowid, key, delta) in [(5, "a", 10), (6, "b", 20), (300, "a", 30), (301, "c", 40), (5_000, "b", 50),
                                        (5_255, "a", 60), (5_256, "c", 5), (1_000_000, "c", 70)] {
                try storage.database.execute("INSERT INTO access_log (rowid, key, time) VALUES (\(rowid), '\(key)', \(base + Int64(delta)))")
            }
            storage.stepDuration = duration
            let folds = try storage.reviewFoldAll(limit: 100)
            XCTAssertLessThanOrEqual(folds, 8, "duration \(duration)")
            XCTAssertEqual(try storage.reviewFoldLog().count, 0)
            XCTAssertEqual(try storage.reviewFoldManifestTime("a"), base + 60, "duration \(duration)")
            XCTAssertEqual(try storage.reviewFoldManifestTime("b"), base + 50, "duration \(duration)")
            XCTAssertEqual(try storage.reviewFoldManifestTime("c"), base + 70, "duration \(duration)")
        }
    }

    /// Runs `body` once per duration of `durations`, each time with a fresh store holding the keys a, b and c
    /// (saved, their access times folded) and the manifest time of c (the latest save).
    private func forEachDurationWithABC(
        _ label: String, _ body: (Double, KVStorage, Int64) throws -> Void
    ) throws {
        for duration in Self.durations {
            let directory = try TemporaryDirectory(label)
            defer { try? directory.remove() }
            let storage = try KVStorage(path: directory.path, type: .sqlite)
            defer { storage.close() }
            for key in ["a", "b", "c"] { try storage.save(key: key, value: testBytes(8, seed: 1)) }
            try storage.applyAccessTimes()
            try body(duration, storage, try XCTUnwrap(try storage.reviewFoldManifestTime("c")))
        }
    }
}
