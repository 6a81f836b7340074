@testable import KVCache
import Foundation
import XCTest

/// Review (defect, default `syncsFiles: false`): after a power loss or an OS crash the README promises the
/// full scan ("a power loss or OS crash (another boot id)") and KVStorage.swift's durability note that "the
/// store still opens consistent (rows whose file is missing or of the wrong size are removed)". But the
/// opener decides from the slots alone: it looks at the boot id only for slots it finds dead. Without
/// `syncsFiles` the "o" mark of `claim` is not fsynced (`claim(sync: syncsFiles)`), while the slot's earlier
/// "." (a clean close long before) is on disk: a power loss soon after an open can bring the slot back as
/// "." — along with the unsynced value files and commits the promise is about. The opener of the next boot
/// then finds the header of another boot, no dead slot, calls the shutdown clean and cleans nothing: the row
/// whose file never reached the disk and the file whose row's commit was lost stay. The test leaves exactly
/// that state (header of another boot, every slot ".", one row without its file, one orphan).
final class KVCachePowerLossSlotReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testTheFirstOpenOfAnotherBootScansEvenWithoutADeadSlot() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "lost", value: Data(repeating: 1, count: 700), filename: "lost-file")
        try storage.save(key: "kept", value: Data(repeating: 2, count: 700), filename: "kept-file")
        storage.close()
        // What the power loss took: the value file of "lost" (its row's commit survived), and the row of a
        // value whose file survived ("orphan").
        XCTAssertEqual(unlink(directory.path + "/data/lost-file"), 0)
        try Data(repeating: 3, count: 700).write(to: URL(fileURLWithPath: directory.path + "/data/orphan-file"))
        // The previous boot wrote the header; this boot has another id.
        let slots = try FileHandle(forUpdating: URL(fileURLWithPath: directory.path + "/instances"))
        let header = try XCTUnwrap(try slots.read(upToCount: InstanceSlots.headerSize))
        XCTAssertEqual(Array(header.prefix(5)), InstanceSlots.magic)
        try slots.seek(toOffset: 5)
        try slots.write(contentsOf: Data("00000000-0000-4000-8000-000000000000".utf8))
        try slots.close()

        let reopened = try KVStorage(path: directory.path, type: .file)
        defer { reopened.close() }
        XCTAssertTrue(reopened.openReport.ranCrashCleanup, "first open of a new boot: \(reopened.openReport)")
        XCTAssertEqual(try reopened._checkInvariants(), [], "the first open after a power loss left the store inconsistent")
        XCTAssertEqual(try reopened.itemValue(forKey: "kept"), Data(repeating: 2, count: 700))
    }
}
