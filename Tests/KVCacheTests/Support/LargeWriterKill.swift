@testable import KVCache
import Foundation
import XCTest

extension XCTestCase {
    /// Starts `KVCacheDeadWriterLeakReviewTests.testChildLargeWriter` (a child process saving 16 MB file values
    /// into the folder at `path`) and SIGKILLs it as soon as a new temporary shows up in `tmp/` — one not named
    /// with `liveSlot`'s prefix when given (that slot's instance is alive and writes temporaries too). Returns
    /// whether the kill landed while a temporary was being written (within 15 s).
    func killLargeWriterMidWrite(path: String, besides liveSlot: Int? = nil) throws -> Bool {
        let child = try ChildProcess(test: "KVCacheTests.KVCacheDeadWriterLeakReviewTests/testChildLargeWriter",
                                     environment: ["KVCACHE_DEAD_WRITER_PATH": path])
        defer { _ = child.finish() }
        guard child.waitUntilReady(timeout: 60) else {
            child.kill()
            XCTFail("the child writer never got ready: \(child.outputSoFar)")
            return false
        }
        let tmp = path + "/tmp"
        let live = liveSlot.map(InstanceSlots.temporaryPrefix)
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: tmp))
        let deadline = Date().addingTimeInterval(15)
        // Polls an external process's progress (with a deadline): kill as soon as a new temporary shows up.
        while Date() < deadline {
            let new = Set(try FileManager.default.contentsOfDirectory(atPath: tmp)).subtracting(before)
            if new.contains(where: { name in live.map { !name.hasPrefix($0) } ?? true }) {
                child.kill()
                return true
            }
            usleep(500)
        }
        child.kill()
        return false
    }
}
