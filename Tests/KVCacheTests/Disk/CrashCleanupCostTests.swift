@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// The cleanup after a process crash looks at what the crash left (the intent journal's names and `tmp/`),
/// not at every value file: a store of N value files whose writer was killed (SIGKILL, a real child) mid-write
/// is cleaned up looking at a handful of files, with no orphan or dangling row left (see "Intent journal"
/// in KVStorage+IntentJournal.swift).
final class CrashCleanupCostTests: XCTestCase {
    /// Child side: replaces and removes file values of the store in a loop until killed.
    func testCleanupCostChildWriter() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_COST_PATH"], let count = environment["KVCACHE_COST_COUNT"].flatMap(Int.init)
        else { throw XCTSkip("child writer: runs only inside CrashCleanupCostTests") }
        let storage = try KVStorage(path: path, type: .mixed)
        var rng = SplitMix64(seed: UInt64(getpid()))
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            let index = rng.next(upTo: count)
            if rng.next(upTo: 4) == 0 {
                try storage.removeItem(forKey: "k\(index)")
            } else {
                try storage.save(key: "k\(index)", value: testBytes(3_000 + sequence % 5_000, seed: sequence), filename: "f\(index)")
            }
            if sequence % 50 == 49 { try storage.removeItems(toFitCount: count - 10) }
        }
    }

    /// A store of `count` file values, closed cleanly.
    private func populate(_ path: String, count: Int) throws {
        let storage = try KVStorage(path: path, type: .mixed)
        for index in 0..<count { try storage.save(key: "k\(index)", value: testBytes(1_000, seed: index), filename: "f\(index)") }
        storage.close()
    }

    /// Kills a writer child at a random moment; returns the report of the next open's cleanup.
    private func killWriterAndReopen(_ path: String, count: Int, rng: inout SplitMix64) throws -> (CleanupReport, OpenReportPair) {
        let child = try ChildProcess(test: "KVCacheTests.CrashCleanupCostTests/testCleanupCostChildWriter",
                                     environment: ["KVCACHE_COST_PATH": path, "KVCACHE_COST_COUNT": "\(count)"])
        XCTAssertTrue(child.waitUntilReady(timeout: 60))
        usleep(UInt32(5_000 + rng.next(upTo: 60_000))) // chooses the moment of the kill, waits for no work
        child.kill()
        _ = child.finish()
        XCTAssertTrue(child.wasKilled)
        let storage = try KVStorage(path: path, type: .mixed)
        defer { storage.close() }
        XCTAssertEqual(try storage._checkInvariants(), [], "an orphan or a dangling row survived the cleanup")
        return (storage.cleanupReport, OpenReportPair(clean: storage.openReport.previousShutdownWasClean,
                                                       cleanedUp: storage.openReport.ranCrashCleanup))
    }

    private struct OpenReportPair: Equatable {
        var clean: Bool
        var cleanedUp: Bool
    }

    func testCleanupAfterAKillLooksAtWhatWasInFlightNotAtTheStore() throws {
        var rng = SplitMix64(seed: 0xC1EA_4C05)
        for count in [100, 3_000] {
            let directory = try TemporaryDirectory("kvcache-cost")
            defer { try? directory.remove() }
            try populate(directory.path, count: count)
            var worst = 0
            for round in 0..<4 {
                let (cleanup, open) = try killWriterAndReopen(directory.path, count: count, rng: &rng)
                XCTAssertEqual(open, OpenReportPair(clean: false, cleanedUp: true), "\(count) files, round \(round)")
                XCTAssertFalse(cleanup.fullScan, "\(count) files, round \(round)")
                worst = max(worst, cleanup.filesExamined)
            }
            print("cleanup cost: \(count) value files: at most \(worst) files examined after a kill")
            // A save in flight: its temporary, its new name and the name it replaces; a trim step: 64 names.
            XCTAssertLessThanOrEqual(worst, 70, "\(count) value files: the cleanup looked at \(worst) files")
        }
    }

    /// The full scan stays available: a store last opened by an older version (a count in `lock`, no slots)
    /// is scanned whole once, and an orphan planted there goes.
    func testAStoreOfAnOlderVersionIsScannedWholeOnce() throws {
        let directory = try TemporaryDirectory("kvcache-cost-legacy")
        defer { try? directory.remove() }
        try populate(directory.path, count: 50)
        try FileManager.default.removeItem(atPath: directory.path + "/instances")
        try Data("1\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/lock"))
        try Data([1]).write(to: URL(fileURLWithPath: directory.path + "/data/orphan"))
        var storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertTrue(storage.cleanupReport.fullScan)
        XCTAssertGreaterThanOrEqual(storage.cleanupReport.filesExamined, 50)
        XCTAssertEqual(try storage._checkInvariants(), [])
        storage.close()
        storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(storage.openReport, .init(previousShutdownWasClean: true, ranQuickCheck: false, ranCrashCleanup: false))
        storage.close()
    }

    /// A dead instance's slot (marked open, not locked) under this boot's id means a process crash: the journal
    /// suffices. Under another boot's id (a power loss or an OS crash since, when the journal and the renames may
    /// not have reached the disk) the whole store is scanned; an orphan planted there goes.
    func testADeathBeforeARebootIsScannedWhole() throws {
        for otherBoot in [false, true] {
            let directory = try TemporaryDirectory("kvcache-cost-boot")
            defer { try? directory.remove() }
            try populate(directory.path, count: 30)
            let slots = try FileHandle(forUpdating: URL(fileURLWithPath: directory.path + "/instances"))
            if otherBoot {
                try slots.seek(toOffset: UInt64(InstanceSlots.magic.count))
                try slots.write(contentsOf: Data("00000000-0000-0000-0000-000000000000".utf8))
            }
            try slots.seek(toOffset: UInt64(InstanceSlots.headerSize + 7))
            try slots.write(contentsOf: Data("o".utf8))
            try slots.close()
            try Data([1]).write(to: URL(fileURLWithPath: directory.path + "/data/orphan"))
            let storage = try KVStorage(path: directory.path, type: .mixed)
            XCTAssertEqual(storage.openReport, .init(previousShutdownWasClean: false, ranQuickCheck: true, ranCrashCleanup: true))
            XCTAssertEqual(storage.cleanupReport.fullScan, otherBoot)
            XCTAssertEqual(try directory.files(in: "data").contains("orphan"), !otherBoot,
                           "a planted orphan (no journal names it) goes only with the full scan")
            storage.close()
            XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 0)
        }
    }

    /// Measures the open after a SIGKILL of a store of `KVCACHE_MEASURE_OPEN_FILES` value files (not inline):
    /// the journal-driven cleanup, then the full scan (the cleanup every unclean open ran before the intent
    /// journal; forced here as for a store of an older version). Runs only with the variable set: it prints
    /// numbers, asserts nothing about time.
    func testMeasureOpenAfterKill() throws {
        guard let count = ProcessInfo.processInfo.environment["KVCACHE_MEASURE_OPEN_FILES"].flatMap(Int.init)
        else { throw XCTSkip("measurement: set KVCACHE_MEASURE_OPEN_FILES") }
        let directory = try TemporaryDirectory("kvcache-measure")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for index in 0..<count { try storage.save(key: "k\(index)", value: testBytes(100, seed: index % 97), filename: "f\(index)") }
        storage.close()
        var rng = SplitMix64(seed: 7)
        for round in 0..<3 {
            let child = try ChildProcess(test: "KVCacheTests.CrashCleanupCostTests/testCleanupCostChildWriter",
                                         environment: ["KVCACHE_COST_PATH": directory.path, "KVCACHE_COST_COUNT": "\(count)"])
            XCTAssertTrue(child.waitUntilReady(timeout: 120))
            usleep(UInt32(20_000 + rng.next(upTo: 20_000)))
            child.kill()
            _ = child.finish()
            var start = monotonicSeconds()
            var reopened = try KVStorage(path: directory.path, type: .mixed)
            let journalOpen = monotonicSeconds() - start
            let report = reopened.cleanupReport
            reopened.close()
            // The same kill, cleaned up by the full scan: mark the folder unclean as an older version would.
            try Data("1\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/lock"))
            start = monotonicSeconds()
            reopened = try KVStorage(path: directory.path, type: .mixed)
            let fullOpen = monotonicSeconds() - start
            XCTAssertTrue(reopened.cleanupReport.fullScan)
            reopened.close()
            print(String(format: "open after SIGKILL, %d value files, round %d: journal cleanup %.1f ms (%d files examined), full scan %.1f ms (%d)",
                         count, round, journalOpen * 1_000, report.filesExamined, fullOpen * 1_000, reopened.cleanupReport.filesExamined))
        }
    }
}
