@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Real child processes: one meets corruption errors while the other writes (no acknowledged write lost,
/// one store), and a process really out of file descriptors (`RLIMIT_NOFILE`) opens a store (typed error,
/// nothing lost).
final class CorruptionProcessTests: XCTestCase {
    static let writes = 300

    /// Worker side (`KVCACHE_CORRUPT_PATH` set): writes `writes` keys of its own, printing `ACK <key> <seed>`
    /// after each save returned. Worker 0 meets a corruption error every 25 operations.
    func testCorruptionWorker() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_CORRUPT_PATH"], let id = environment["KVCACHE_CORRUPT_ID"].flatMap(Int.init)
        else { throw XCTSkip("corruption worker: runs only inside testCorruptionInOneProcessLosesNoAcknowledgedWrite") }
        let storage = try KVStorage(path: path, type: .mixed)
        var rng = SplitMix64(seed: UInt64(id + 11))
        emitLine("READY")
        awaitStartSignal()
        var failures = 0
        for i in 0..<Self.writes {
            if id == 0 && i % 25 == 12 {
                // What a statement meeting a damaged page reports; SQLite's own paths end in this same call.
                let corrupt = KVCacheError.sqlite(code: 11, message: "database disk image is malformed", operation: "test")
                _ = Result { () throws(KVCacheError) in try storage.guarded { () throws(KVCacheError) in throw corrupt } }
            }
            let key = "p\(id)-\(i)", seed = id * 1_000_000 + i
            let size = rng.next(upTo: 2) == 0 ? 1 + rng.next(upTo: 2_000) : 20_000 + rng.next(upTo: 20_000)
            do {
                try storage.save(key: key, value: testBytes(size, seed: seed), filename: size > 2_000 ? "f-\(key)" : nil)
                emitLine("ACK \(key) \(seed) \(size)")
            } catch {
                failures += 1
                emitLine("FAIL \(key) \(error)")
            }
            // Read one of the other worker's keys now and then, so both really share the store.
            if i % 10 == 0 { _ = Result { () throws(KVCacheError) in try storage.itemValue(forKey: "p\(1 - id)-\(i / 2)") } }
        }
        storage.close()
        emitLine("DONE \(failures)")
    }

    func testCorruptionInOneProcessLosesNoAcknowledgedWrite() throws {
        let directory = try TemporaryDirectory("kvcache-corrupt")
        defer { try? directory.remove() }
        let workers = try (0..<2).map { id in
            try ChildProcess(test: "KVCacheTests.CorruptionProcessTests/testCorruptionWorker",
                             environment: ["KVCACHE_CORRUPT_PATH": directory.path, "KVCACHE_CORRUPT_ID": "\(id)"])
        }
        for worker in workers { XCTAssertTrue(worker.waitUntilReady(timeout: 60)) }
        for worker in workers { try worker.send("go") }
        var acknowledged: [(key: String, seed: Int, size: Int)] = []
        for (id, worker) in workers.enumerated() {
            let lines = worker.finish()
            XCTAssertEqual(worker.process.terminationStatus, 0, "worker \(id) failed: \(lines.suffix(3))")
            XCTAssertTrue(lines.contains { $0.hasPrefix("DONE") }, "worker \(id): \(lines.suffix(3))")
            for line in lines where line.hasPrefix("ACK ") {
                let parts = line.split(separator: " ")
                acknowledged.append((String(parts[1]), Int(parts[2])!, Int(parts[3])!))
            }
        }
        XCTAssertGreaterThan(acknowledged.count, Self.writes) // most of both workers' writes
        let storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(try storage._checkInvariants(), [])
        var lost = 0
        for write in acknowledged where try storage.itemValue(forKey: write.key) != testBytes(write.size, seed: write.seed) {
            lost += 1
        }
        XCTAssertEqual(lost, 0, "acknowledged writes lost")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".corrupt-") }, [])
    }

    /// Child side (`KVCACHE_NOFILE_PATH` set): opens the store with the descriptor limit just above what the
    /// process uses, for each of several margins, then with the limit restored; prints what happened.
    func testOutOfDescriptorsChild() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_NOFILE_PATH"]
        else { throw XCTSkip("descriptor child: runs only inside testRealEMFILEAtOpenLosesNothing") }
        var original = rlimit()
        XCTAssertEqual(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original), 0)
        var failed = 0
        for margin in 0..<12 {
            // New descriptors take the lowest free numbers and the limit bounds the number: a limit just above
            // the `margin`-th free number lets about `margin` more open.
            let used = Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int.init))
            let free = (0...).lazy.filter { !used.contains($0) }.prefix(margin + 1).map { $0 }
            var tight = original
            tight.rlim_cur = rlim_t(free.last!)
            XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &tight), 0)
            let outcome = Result { () throws(KVCacheError) in
                let storage = try KVStorage(path: path, type: .mixed)
                defer { storage.close() }
                return (storage.recoveryError, try storage.itemsCount())
            }
            XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original), 0)
            switch outcome {
            case .success(let (recovery, count)): emitLine("OPENED margin \(margin) count \(count) recovery \(recovery.map { "\($0)" } ?? "none")")
            case .failure(let error):
                failed += 1
                emitLine("FAILED margin \(margin): \(error)")
            }
        }
        emitLine("CHILD DONE failed \(failed)")
    }

    func testRealEMFILEAtOpenLosesNothing() throws {
        let directory = try TemporaryDirectory("kvcache-nofile")
        defer { try? directory.remove() }
        var expected: [String: Data] = [:]
        do {
            let storage = try KVStorage(path: directory.path, type: .mixed)
            for i in 0..<20 {
                let value = testBytes(i % 2 == 0 ? 30_000 + i : 100 + i, seed: i)
                try storage.save(key: "k\(i)", value: value, filename: i % 2 == 0 ? "f\(i)" : nil)
                expected["k\(i)"] = value
            }
            storage.close()
        }
        let child = try ChildProcess(test: "KVCacheTests.CorruptionProcessTests/testOutOfDescriptorsChild",
                                     environment: ["KVCACHE_NOFILE_PATH": directory.path])
        let lines = child.finish()
        XCTAssertEqual(child.process.terminationStatus, 0, "\(lines.suffix(5))")
        let failures = lines.filter { $0.hasPrefix("FAILED") }
        XCTAssertFalse(failures.isEmpty, "the limit never bit: \(lines)")
        for line in failures { XCTAssertTrue(line.contains("24"), "not EMFILE: \(line)") } // EMFILE is 24 on Linux
        for line in lines where line.hasPrefix("OPENED") { XCTAssertTrue(line.hasSuffix("count 20 recovery none"), "\(line)") }
        let storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertNil(storage.recoveryError)
        for (key, value) in expected { XCTAssertEqual(try storage.itemValue(forKey: key), value, key) }
        XCTAssertEqual(try storage._checkInvariants(), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".corrupt-") }, [])
    }
}
