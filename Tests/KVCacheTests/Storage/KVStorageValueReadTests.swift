@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// `KVStorage.itemValue(forKey:)` reads an inline value with one lookup whose key is bound without a copy
/// (`SQLiteStatement.withBorrowedText`) and builds no item; a value in a file goes through `item(forKey:)`'s
/// checks. Attacks: a seeded random model over odd
/// keys (empty, NUL, 100 KB, every plane, canonically equal pairs), empty and file values and files deleted
/// behind the store's back; LRU order between reads within microseconds; the binding left after a read,
/// a failed step and a read re-entered from inside another's statement.
final class KVStorageValueReadTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Seeded random saves (inline, empty, in a file), removals, deleted files and reads against a model:
    /// `itemValue` returns what was saved last, the same as `item(forKey:)`, and a value whose file went missing
    /// reads as a miss and loses its row. `KVSTORAGE_VALUE_READ_SEED` replays a seed.
    func testValueReadsMatchAModelAndTheItemRead() throws {
        let seed = ProcessInfo.processInfo.environment["KVSTORAGE_VALUE_READ_SEED"].flatMap(UInt64.init) ?? 20_261_127
        let failuresBefore = testRun?.failureCount ?? 0
        defer {
            if (testRun?.failureCount ?? 0) > failuresBefore {
                print("KVStorageValueReadTests: seed \(seed) failed (KVSTORAGE_VALUE_READ_SEED=\(seed) replays it)")
            }
        }
        var rng = SplitMix64(seed: seed)
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        let keys = OddKeyTests.oddKeys + (0..<24).map { "plain-\($0)" }
        var model: [Int: Data] = [:] // by index into `keys`: they differ as bytes, not all as `String`s
        var files: [Int: String] = [:]
        for step in 0..<2_500 {
            let index = rng.next(upTo: keys.count)
            let key = keys[index]
            let context = "seed \(seed), step \(step), key #\(index)"
            switch rng.next(upTo: 20) {
            case 0..<5:
                let value: Data
                var filename: String?
                switch rng.next(upTo: 4) {
                case 0: value = Data()
                case 1: value = testBytes(20_000 + rng.next(upTo: 4_000), seed: step); filename = "f\(index)-\(step)"
                default: value = testBytes(1 + rng.next(upTo: 3_000), seed: step)
                }
                try storage.save(key: key, value: value, filename: filename)
                model[index] = value
                files[index] = filename
            case 5..<7:
                try storage.removeItem(forKey: key)
                model[index] = nil
                files[index] = nil
            case 7:
                // The value's file deleted behind the store's back: the next read is a miss.
                guard let filename = files[index] else { continue }
                try FileManager.default.removeItem(atPath: directory.path + "/data/" + filename)
                model[index] = nil
                files[index] = nil
            default:
                let value = try storage.itemValue(forKey: key)
                XCTAssertEqual(value, model[index], context)
                if step % 3 == 0 { XCTAssertEqual(try storage.item(forKey: key)?.value, model[index], context) }
            }
            if (testRun?.failureCount ?? 0) > failuresBefore { return }
        }
        XCTAssertEqual(try storage.itemsCount(), model.count)
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// Reads within microseconds of each other still order exactly: each access stamp is after the one
    /// before it, so a trim keeps the most recently read keys.
    func testReadsMicrosecondsApartKeepTheirOrder() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        for key in ["a", "b", "c", "d"] { try storage.save(key: key, value: Data(key.utf8)) }
        // All within a few microseconds: only the stamps' strict order can tell them apart.
        for key in ["c", "a", "d", "b", "a"] { XCTAssertNotNil(try storage.itemValue(forKey: key)) }
        try storage.removeItems(toFitCount: 2)
        XCTAssertNil(try storage.itemInfo(forKey: "c"))
        XCTAssertNil(try storage.itemInfo(forKey: "d"))
        XCTAssertEqual(try storage.itemValue(forKey: "b"), Data("b".utf8))
        XCTAssertEqual(try storage.itemValue(forKey: "a"), Data("a".utf8))
    }

    /// After a read the statement holds no binding: the key's bytes are gone once the read returns, and a
    /// statement stepped without a new binding must not see them.
    func testAReadLeavesItsStatementUnbound() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        try storage.save(key: "present", value: Data([1, 2, 3]))
        var key = "pres"
        key += "ent" // a native heap string, not a literal
        XCTAssertEqual(try storage.itemValue(forKey: key), Data([1, 2, 3]))
        XCTAssertEqual(try storage.containsItem(forKey: key), true)
        for hot in [HotStatement.selectValue, .containsKey] {
            let select = try storage.database.prepare(hot)
            defer { select.reset() }
            // NULL (no binding) matches no key.
            XCTAssertFalse(try select.step(), "\(hot) kept its key bound")
        }
    }

    /// A step that fails inside the borrowed binding throws, and leaves the statement reset and unbound:
    /// the next read of the same statement works.
    func testAFailedStepLeavesTheStatementUsable() throws {
        let faults = KVStorageFaults()
        let storage = try KVStorage(path: directory.path, type: .sqlite, faults: faults)
        defer { storage.close() }
        try storage.save(key: "k", value: Data([7]))
        faults.fail(.sqliteStep, onCall: 1, sqliteCode: SQLITE_IOERR_CODE)
        XCTAssertThrowsError(try storage.itemValue(forKey: "k"))
        XCTAssertEqual(try storage.itemValue(forKey: "k"), Data([7]))
        let select = try storage.database.prepare(.selectValue)
        defer { select.reset() }
        XCTAssertFalse(try select.step())
    }

    /// A read made from inside another read's borrowed binding (the same statement, re-entered) gets its own
    /// answer, and the outer read still sees its own key.
    func testABorrowedBindingSurvivesANestedReadOfAnotherStatement() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        try storage.save(key: "outer", value: Data([1]))
        try storage.save(key: "inner", value: Data([2]))
        let outer = try storage.database.prepare(.selectItem)
        let (found, nested) = try outer.withBorrowedText("outer", at: 1) { () throws(KVCacheError) -> (Data?, Data?) in
            // Another statement reads while the outer key is bound.
            let nested = try storage.itemValue(forKey: "inner")
            guard try outer.step() else { return (nil, nested) }
            return (outer.data(5), nested)
        }
        XCTAssertEqual(found, Data([1]))
        XCTAssertEqual(nested, Data([2]))
    }
}

/// SQLITE_IOERR: a fault that passes, not damage.
private let SQLITE_IOERR_CODE: Int32 = 10
