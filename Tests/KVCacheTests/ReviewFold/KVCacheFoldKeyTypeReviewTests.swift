@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67), attack on "keys folded apart, exactly": the fold groups a batch's rows
/// by their key's bytes (`Data`) and applies each group's newest time once, at the group's first row, matched
/// by that row's own key. A BLOB and a TEXT with the same bytes are different keys to SQLite (the manifest's
/// `key = …` never matches a BLOB against a TEXT), but the same `Data`: if the BLOB row comes first, the text
/// key's newest time is applied to the BLOB's key (no such manifest row) and the text key's read is lost. Such
/// a row comes only from outside (raw SQL, another writer, damage); the old `GROUP BY key` kept them apart.
final class KVCacheFoldKeyTypeReviewTests: XCTestCase {
    func testABlobRowDoesNotSwallowTheTextKeyWithTheSameBytes() throws {
        for duration in [0, Double.infinity] {
            let directory = try TemporaryDirectory("kvcache-fold-key-type")
            defer { try? directory.remove() }
            let storage = try KVStorage(path: directory.path, type: .sqlite)
            defer { storage.close() }
            try storage.save(key: "k", value: testBytes(16, seed: 1))
            try storage.save(key: "other", value: testBytes(16, seed: 2))
            try storage.applyAccessTimes()
            // The later of the two saves: every logged time below is newer than both keys' manifest times.
            let saved = try XCTUnwrap(try storage.reviewFoldManifestTime("other"))
            storage.endReadSnapshot()
            // A BLOB 'k' (older) then the text 'k' (newer), and another key's read in between.
            try storage.database.execute("INSERT INTO access_log (key, time) VALUES (x'6b', \(saved + 10))")
            try storage.reviewFoldAppend("other", time: saved + 20)
            try storage.reviewFoldAppend("k", time: saved + 30)
            storage.stepDuration = duration
            _ = try storage.reviewFoldAll()
            XCTAssertEqual(try storage.reviewFoldLog().count, 0)
            XCTAssertEqual(try storage.reviewFoldManifestTime("k"), saved + 30,
                           "duration \(duration): the text key's read was lost to the BLOB row with its bytes")
            XCTAssertEqual(try storage.reviewFoldManifestTime("other"), saved + 20)
        }
    }

    /// A BLOB key in the manifest itself (written from outside) gets its own BLOB rows' newest time, not a
    /// newer one from the text key with its bytes.
    func testABlobKeyInTheManifestKeepsItsOwnTime() throws {
        let directory = try TemporaryDirectory("kvcache-fold-key-type-manifest")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        try storage.save(key: "k", value: testBytes(16, seed: 1))
        try storage.applyAccessTimes()
        let saved = try XCTUnwrap(try storage.reviewFoldManifestTime("k"))
        storage.endReadSnapshot()
        try storage.database.execute("""
            INSERT INTO manifest (key, filename, size, inline_data, modification_time, last_access_time)
            VALUES (x'6b', NULL, 1, x'00', \(saved), \(saved))
            """)
        try storage.database.execute("INSERT INTO access_log (key, time) VALUES (x'6b', \(saved + 10))")
        try storage.reviewFoldAppend("k", time: saved + 30)
        _ = try storage.reviewFoldAll()
        XCTAssertEqual(try storage.reviewFoldManifestTime(sqlKey: "x'6b'"), saved + 10, "the BLOB key took the text key's time")
        XCTAssertEqual(try storage.reviewFoldManifestTime("k"), saved + 30)
    }
}
