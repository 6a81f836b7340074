@testable import KVCache
import XCTest

/// The k-th write, fsync, rename or SQLite step fails (ENOSPC): the call reports it and the store stays
/// consistent, holding for every key either its old value or its new one.
final class KVStorageFaultTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// The workload: overwrites (file → file, file → inline, inline → file), removals, trims.
    private func runWorkload(_ storage: KVStorage, failures: inout [KVCacheError]) {
        for step in 0..<7 {
            do {
                switch step {
                case 0: try storage.save(key: "a", value: testBytes(40_000, seed: 10), filename: "fa")
                case 1: try storage.save(key: "b", value: testBytes(100, seed: 11))
                case 2: try storage.save(key: "c", value: testBytes(30_000, seed: 12), filename: "fc")
                case 3: try storage.removeItem(forKey: "d")
                case 4: try storage.removeItems(toFitCount: 5)
                case 5: _ = try storage.item(forKey: "e")
                default: try storage.removeItems(largerThan: 45_000)
                }
            } catch {
                failures.append(error)
            }
        }
    }

    /// Old values (seed i) and the workload's new ones (seed 10+): anything else is corruption.
    private func isKnownValue(_ key: String, _ data: Data) -> Bool {
        let index = Int(key.unicodeScalars.first!.value) - 97
        let olds = [testBytes(20_000 + index, seed: index), testBytes(500 + index, seed: index)]
        let news = [testBytes(40_000, seed: 10), testBytes(100, seed: 11), testBytes(30_000, seed: 12)]
        return (olds + news).contains(data)
    }

    func testEveryInjectedFaultIsReportedAndLeavesTheStoreConsistent() throws {
        var injected = 0
        for kind in [KVStorageFaults.Operation.fileWrite, .fileSync, .rename, .sqliteStep] {
            for call in 1...40 {
                let path = directory.path + "/\(kind)-\(call)"
                let faults = KVStorageFaults()
                let storage = try KVStorage(path: path, type: .mixed, syncsFiles: true, faults: faults)
                for (i, key) in ["a", "b", "c", "d", "e", "f"].enumerated() {
                    let big = i % 2 == 0
                    try storage.save(key: key, value: big ? testBytes(20_000 + i, seed: i) : testBytes(500 + i, seed: i),
                                     filename: big ? "f\(key)" : nil)
                }
                faults.fail(kind, onCall: call, errno: ENOSPC)
                var failures: [KVCacheError] = []
                runWorkload(storage, failures: &failures)
                let fired = faults.count(of: kind) >= call
                faults.disarm()
                if fired { injected += 1 }
                // Renames into trash/ fall back to unlink, so a failed one is absorbed; every other fault surfaces.
                if fired && kind != .rename { XCTAssertFalse(failures.isEmpty, "\(kind) #\(call) was swallowed") }
                for failure in failures {
                    switch failure {
                    case .io(let code, _, _): XCTAssertEqual(code, ENOSPC)
                    case .sqlite(let code, _, _): XCTAssertEqual(code, 13)
                    default: XCTFail("unexpected \(failure)")
                    }
                }
                XCTAssertEqual(try storage._checkInvariants(), [], "\(kind) #\(call)")
                for key in ["a", "b", "c", "d", "e", "f"] {
                    if let value = try storage.itemValue(forKey: key) {
                        XCTAssertTrue(isKnownValue(key, value), "\(kind) #\(call): corrupt \(key)")
                    }
                }
                storage.close()
                // Reopening (with cleanup) keeps the store consistent too.
                let reopened = try KVStorage(path: path, type: .mixed)
                XCTAssertEqual(try reopened._checkInvariants(), [], "\(kind) #\(call) after reopen")
                reopened.close()
                if !fired { break }
            }
        }
        XCTAssertGreaterThan(injected, 20)
    }
}
