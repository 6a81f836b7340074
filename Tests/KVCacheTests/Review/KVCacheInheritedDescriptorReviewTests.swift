@testable import KVCache
import Foundation
import XCTest

/// Review (attack; the code held when written): the kernel drops an instance's OFD slot lock and its `flock`s
/// only when the last descriptor of each description closes. A process that has the store open and starts
/// a helper program (here `sleep`, through `Process`) must not hand those descriptors down: if the helper
/// outlives a SIGKILL of the process, a leaked slot description would keep the dead instance's slot locked
/// ("open elsewhere": the crash cleanup never runs) and a leaked `lock` description would keep every later
/// opener from the exclusive lock. Checked with the helper still running: the dead slot is seen as dead,
/// the next open is exclusive and runs the crash cleanup, and every value reads back.
final class KVCacheInheritedDescriptorReviewTests: XCTestCase {
    /// Child side: opens the store, writes a value, starts `sleep`, reports its pid and waits to be killed.
    func testChildSpawner() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_SPAWNER_PATH"]
        else { throw XCTSkip("child: runs only inside KVCacheInheritedDescriptorReviewTests") }
        let storage = try KVStorage(path: path, type: .mixed)
        try storage.save(key: "k", value: Data(repeating: 9, count: 50_000), filename: "k-file")
        try storage.save(key: "i", value: Data(repeating: 8, count: 50))
        let helper = Process()
        helper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        helper.arguments = ["60"]
        // Not the test's output pipe (the parent reads it to its end); every other descriptor is up to the store.
        helper.standardInput = FileHandle.nullDevice
        helper.standardOutput = FileHandle.nullDevice
        helper.standardError = FileHandle.nullDevice
        try helper.run()
        emitLine("HELPER \(helper.processIdentifier)")
        emitLine("READY")
        awaitStartSignal()
        storage.close()
    }

    func testAHelperProcessDoesNotKeepADeadInstanceAlive() throws {
        let directory = try TemporaryDirectory()
        defer { try? directory.remove() }
        let child = try ChildProcess(test: "KVCacheTests.KVCacheInheritedDescriptorReviewTests/testChildSpawner",
                                     environment: ["KVCACHE_SPAWNER_PATH": directory.path])
        XCTAssertTrue(child.waitUntilReady(timeout: 60))
        let helper = child.outputSoFar.split(separator: "\n").first { $0.hasPrefix("HELPER ") }
            .flatMap { Int32($0.dropFirst("HELPER ".count)) }
        defer { if let helper { _ = kill(helper, SIGKILL) } }
        XCTAssertNotNil(helper, "child output: \(child.outputSoFar)")
        child.kill()
        _ = child.finish()
        XCTAssertTrue(child.wasKilled)
        if let helper {
            let state = (try? String(contentsOfFile: "/proc/\(helper)/stat", encoding: .utf8)) ?? ""
            XCTAssertTrue(state.contains("(sleep) S"), "the helper must still run for the test to mean anything: \(state)")
        }

        let slots = try KVStorage._instanceSlots(atPath: directory.path)
        XCTAssertEqual(slots?.open, 0, "a live slot with only the helper left: \(String(describing: slots))")
        XCTAssertEqual(slots?.dead, 1, "\(String(describing: slots))")
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        XCTAssertTrue(storage.openReport.ranCrashCleanup, "\(storage.openReport)")
        XCTAssertEqual(try storage._checkInvariants(), [])
        XCTAssertEqual(try storage.itemValue(forKey: "k"), Data(repeating: 9, count: 50_000))
        XCTAssertEqual(try storage.itemValue(forKey: "i"), Data(repeating: 8, count: 50))
    }
}
