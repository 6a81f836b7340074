@testable import KVCache
import Foundation
import XCTest

/// Two writers (two connections, as two processes would have) replace the same file-backed key over and
/// over while reading it back: the row must never point at a missing file. Replaced files alternate
/// between two names (`k`, `k.1`), so a writer that trashed "its" previous file after another writer had
/// already placed a new file under that name would lose the other's value.
final class ConcurrentReplaceTests: XCTestCase {
    func testWritersReplacingOneKeyNeverLoseTheFileTheRowUses() throws {
        let directory = try TemporaryDirectory("kvcache-replace")
        defer { try? directory.remove() }
        let rounds = 300
        let stores = try (0..<2).map { _ in try KVStorage(path: directory.path, type: .file) }
        let misses = Mutex(0)
        let errors = Mutex<[String]>([])
        let group = DispatchGroup()
        for (id, storage) in stores.enumerated() {
            nonisolated(unsafe) let storage = storage // each thread uses its own instance only
            DispatchQueue.global().async(group: group) {
                var localMisses = 0
                for round in 0..<rounds {
                    do {
                        try storage.save(key: "k", value: testBytes(1_000 + id, seed: id * 10_000 + round), filename: "k")
                        // Our write returned, so some value (ours or a newer one) must be readable.
                        if try storage.itemValue(forKey: "k") == nil { localMisses += 1 }
                    } catch {
                        errors.withLock { $0.append("writer \(id) round \(round): \(error)") }
                    }
                }
                misses.withLock { $0 += localMisses }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(errors.withLock { $0 }, [])
        XCTAssertEqual(misses.withLock { $0 }, 0, "a write was lost")
        let item = try XCTUnwrap(stores[0].item(forKey: "k"))
        XCTAssertTrue(item.size == 1_000 || item.size == 1_001)
        XCTAssertEqual(try stores[0]._checkInvariants(), [])
    }
}
