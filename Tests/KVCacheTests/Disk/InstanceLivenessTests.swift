@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Instances of this process and of child processes open, close, are killed (SIGKILL) and wait in the
/// recovery protocol in a random (seeded) order; after every step the folder's instance slots say exactly
/// which instances are open and whether one died without `close()` since the last cleanup, every exclusive
/// open runs the crash cleanup iff one did, and every open that is not exclusive frees the dead slots beside
/// the live instances (see "Clean shutdown" in KVStorage+CleanShutdown.swift). Reproduce a failure with
/// `KVCACHE_LIVENESS_SEED`.
final class InstanceLivenessTests: XCTestCase {
    /// Child side: opens the folder, writes a file value, prints its open report and READY, then closes
    /// cleanly when told (a line on standard input) unless it is killed first.
    func testLivenessChildHolder() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_LIVENESS_PATH"]
        else { throw XCTSkip("holder: runs only inside InstanceLivenessTests") }
        let storage = try KVStorage(path: path, type: .mixed)
        try storage.save(key: "child-\(getpid())", value: testBytes(3_000, seed: Int(getpid())), filename: "child-\(getpid())")
        emitLine("CLEAN \(storage.openReport.previousShutdownWasClean) CLEANUP \(storage.openReport.ranCrashCleanup)")
        emitLine("READY")
        awaitStartSignal()
        storage.close()
        emitLine("CLOSED")
    }

    private final class Box: @unchecked Sendable { // handed to one other thread, used there only until joined
        let storage: KVStorage
        init(_ storage: KVStorage) { self.storage = storage }
    }

    private struct Instance {
        let storage: KVStorage
        let faults: KVStorageFaults
    }

    func testRandomOpensClosesKillsAndRecoveriesKeepTheCleanShutdownExact() throws {
        let seed = ProcessInfo.processInfo.environment["KVCACHE_LIVENESS_SEED"].flatMap { UInt64($0) } ?? 0x11FE_5EED
        var rng = SplitMix64(seed: seed)
        let directory = try TemporaryDirectory("kvcache-liveness")
        defer { try? directory.remove() }
        let path = directory.path

        var local: [Instance] = []
        var children: [ChildProcess] = []
        // Whether an instance died without `close()` since the last crash cleanup: the next exclusive opener
        // must clean up iff this holds. A new folder counts as unclean (nothing says it was closed).
        var died = true
        var exclusiveOpens = 0, kills = 0, recoveries = 0
        var waiting = false // a local instance (not in `local`) is in a recovery wait

        func fail(_ step: Int, _ message: String) {
            XCTFail("seed \(seed) (KVCACHE_LIVENESS_SEED) step \(step): \(message)")
        }
        func check(_ step: Int, _ what: String) throws {
            let slots = try KVStorage._instanceSlots(atPath: path)
            let expected = (open: local.count + children.count, dead: died)
            if slots?.open != expected.open || (slots.map { $0.dead > 0 } ?? true) != expected.dead {
                fail(step, "after \(what): slots \(String(describing: slots)), expected \(expected.open) open, dead: \(expected.dead)")
            }
        }
        func openLocal(_ step: Int, checked: Bool) throws {
            let faults = KVStorageFaults()
            let exclusive = local.isEmpty && children.isEmpty && !waiting
            let storage = try KVStorage(path: path, type: .mixed, faults: faults)
            storage.recoveryState.lockWait = 0.3
            try storage.save(key: "local-\(step)", value: testBytes(2_500, seed: step), filename: "local-\(step)")
            if exclusive && checked {
                exclusiveOpens += 1
                if storage.openReport.previousShutdownWasClean == died || storage.openReport.ranCrashCleanup != died {
                    fail(step, "exclusive open: \(storage.openReport), an instance died without close: \(died)")
                }
            }
            // Not exclusive: it reaped the dead slots (`InstanceSlots.reapDead`).
            if storage.openReport.ranCrashCleanup || !exclusive { died = false }
            local.append(Instance(storage: storage, faults: faults))
        }
        func spawn(_ step: Int) throws {
            let exclusive = local.isEmpty && children.isEmpty && !waiting
            let child = try ChildProcess(test: "KVCacheTests.InstanceLivenessTests/testLivenessChildHolder",
                                         environment: ["KVCACHE_LIVENESS_PATH": path])
            guard child.waitUntilReady(timeout: 60) else { return fail(step, "child never got ready") }
            let report = child.outputSoFar.split(separator: "\n").first { $0.hasPrefix("CLEAN ") } ?? ""
            if exclusive {
                exclusiveOpens += 1
                if report != "CLEAN \(!died) CLEANUP \(died)" {
                    fail(step, "exclusive open in a child: \(report), an instance died without close: \(died)")
                }
            }
            if report.hasSuffix("CLEANUP true") || !exclusive { died = false }
            children.append(child)
        }
        func closeOrKill(_ step: Int, pick: Int) throws -> String {
            switch pick {
            case 0 where !local.isEmpty:
                local.remove(at: rng.next(upTo: local.count)).storage.close()
                return "close local"
            case 1 where !children.isEmpty:
                let child = children.remove(at: rng.next(upTo: children.count))
                child.kill()
                _ = child.finish()
                if !child.wasKilled { fail(step, "the child was not killed") }
                kills += 1
                died = true
                return "kill child"
            case 2 where !children.isEmpty:
                let child = children.remove(at: rng.next(upTo: children.count))
                try child.send("close")
                let lines = child.finish()
                if !lines.contains("CLOSED") || child.wasKilled { fail(step, "the child did not close: \(lines)") }
                return "close child"
            default:
                try openLocal(step, checked: true)
                return "open local"
            }
        }

        for step in 0..<100 {
            let what: String
            switch rng.next(upTo: 12) {
            case 0, 1:
                guard local.count < 3 else { continue }
                try openLocal(step, checked: true)
                what = "open local"
            case 2, 3:
                guard children.count < 2 else { continue }
                try spawn(step)
                what = "spawn child"
            case 4, 5, 6:
                what = try closeOrKill(step, pick: rng.next(upTo: 3))
            case 7, 8:
                // Every instance closes or dies, then one opens with the folder to itself.
                while !local.isEmpty || !children.isEmpty {
                    let closesLocal = !local.isEmpty && (children.isEmpty || rng.next(upTo: 2) == 0)
                    _ = try closeOrKill(step, pick: closesLocal ? 0 : 1 + rng.next(upTo: 2))
                }
                if rng.next(upTo: 2) == 0 { try openLocal(step, checked: true) } else { try spawn(step) }
                what = "everything closed or killed, then an exclusive open"
            default:
                // A local instance meets (reported) damage while others have the folder open: it drops its
                // open lock and waits; meanwhile another step runs (the race the old count lost).
                guard let waiter = local.first, local.count + children.count >= 2 else { continue }
                let requestsBefore = waiter.storage.generation.recoveryRequests
                let runsBefore = waiter.storage.cleanupReport.runs
                waiter.faults.fail(.sqliteStep, onCall: 1, sqliteCode: 11)
                let box = Box(waiter.storage)
                let waited = expectation(description: "recovery wait \(step)")
                DispatchQueue.global().async {
                    _ = Result { () throws(KVCacheError) in try box.storage.itemValue(forKey: "probe") }
                    waited.fulfill()
                }
                let asked = expectation(for: NSPredicate { _, _ in waiter.storage.generation.recoveryRequests != requestsBefore },
                                        evaluatedWith: nil)
                wait(for: [asked], timeout: 30)
                // Close every other local instance, then open a new one at once: it may get the folder alone
                // while the waiter waits (its report is not checked: the waiter may have got there first).
                let others = local.dropFirst()
                local = []
                waiting = true
                for other in others { other.storage.close() }
                let interleaved = try closeOrKill(step, pick: rng.next(upTo: 4))
                wait(for: [waited], timeout: 30)
                waiting = false
                local.insert(waiter, at: 0)
                if waiter.storage.cleanupReport.runs != runsBefore { died = false }
                recoveries += 1
                what = "recovery wait + \(interleaved)"
            }
            try check(step, what)
        }
        for instance in local { instance.storage.close() }
        for child in children {
            try child.send("close")
            _ = child.finish()
        }
        local = []
        children = []
        try check(100, "closing everything")
        try openLocal(101, checked: true)
        local.forEach { $0.storage.close() }
        print("liveness test: \(exclusiveOpens) exclusive opens checked, \(kills) kills, \(recoveries) recovery waits")
        XCTAssertGreaterThan(kills, 3)
        XCTAssertGreaterThan(recoveries, 3)
        XCTAssertGreaterThan(exclusiveOpens, 8)
    }
}
