@testable import KVCache
import Foundation
import XCTest

/// Review 6 (attack on f611e32's `alternateFilename`; the code held when this was written, kept as a
/// regression test): alternates of long names are cut to 255 bytes. Attacked with names of exactly 255 bytes
/// made of 4-byte scalars, of 8-byte grapheme clusters (flags), of one single 255-byte grapheme cluster (a
/// letter and 127 combining accents: the cut keeps nothing of it), and with other keys whose own names are
/// exactly the cut alternates of the first ones — each replaced several times, read back after every step,
/// then reopened by an exclusive opener (crash cleanup off: a clean shutdown) and removed.
final class KVCacheCutAlternateNameReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-cutname") }
    override func tearDownWithError() throws { try directory.remove() }

    func testAlternatesOfLongNamesCutAtCharactersNeverCollideOrLoseAValue() throws {
        let fourByte = "abc" + String(repeating: "\u{1F600}", count: 63) // 3 + 252 = 255 bytes
        let flags = "abcdefg" + String(repeating: "\u{1F1EB}\u{1F1F7}", count: 31) // 7 + 248 = 255 bytes
        let oneCluster = "e" + String(repeating: "\u{301}", count: 127) // 1 + 254 = 255 bytes, one Character
        var names = [fourByte, flags, oneCluster]
        XCTAssertEqual(names.map(\.utf8.count), [255, 255, 255])
        // Names other keys ask for that equal the cut alternates of the names above.
        names += [KVStorage.alternateFilename(fourByte, suffix: 1), KVStorage.alternateFilename(flags, suffix: 1),
                  KVStorage.alternateFilename(oneCluster, suffix: 1), ".2"]
        let storage = try KVStorage(path: directory.path, type: .file)
        var expected: [String: Data] = [:]
        for round in 0..<4 {
            for (index, name) in names.enumerated() {
                let key = "k\(index)"
                let value = testBytes(1_000 + 37 * index + round, seed: round * 100 + index)
                try storage.save(key: key, value: value, filename: name)
                expected[key] = value
                for (key, value) in expected {
                    XCTAssertEqual(try storage.itemValue(forKey: key), value, "round \(round), after saving k\(index): \(key)")
                }
            }
            XCTAssertEqual(try storage._checkInvariants(), [], "round \(round)")
            for name in try directory.files(in: "data") {
                XCTAssertLessThanOrEqual(name.utf8.count, 255)
                XCTAssertFalse(name.unicodeScalars.contains("\u{FFFD}"), "a name cut inside a scalar: \(name)")
            }
        }
        storage.close()
        let reopened = try KVStorage(path: directory.path, type: .file)
        defer { reopened.close() }
        for (key, value) in expected { XCTAssertEqual(try reopened.itemValue(forKey: key), value, "after reopening: \(key)") }
        XCTAssertEqual(try reopened._checkInvariants(), [])
        try reopened.removeItems(forKeys: Array(expected.keys))
        XCTAssertEqual(try directory.files(in: "data"), [])
    }
}
