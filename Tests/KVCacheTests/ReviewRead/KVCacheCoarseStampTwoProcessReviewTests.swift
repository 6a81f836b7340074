@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review of 6b8dd52, two processes sharing one `DiskCache` folder: a value this process reads right after
/// the other process wrote another is the more recently used one, so `trim(toCount: 1)` must keep it. The
/// read's coarse stamp (up to a 4 ms tick behind) is before the other process's precise write stamp.
final class KVCacheCoarseStampTwoProcessReviewTests: XCTestCase {
    /// Worker side: runs only when re-executed by the parent (`KVCACHE_COARSE_PAIR_PATH` set). For each
    /// line `w <round>` writes `written-<round>` and answers `DONE <round>`.
    func testWriterWorker() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_COARSE_PAIR_PATH"]
        else { throw XCTSkip("coarse-stamp writer: runs only inside testAReadAfterAnotherProcesssWriteIsTheMoreRecentAccess") }
        let cache = try DiskCache(path: path)
        emitLine("READY")
        while let line = readLine() {
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[0] == "w" else { break }
            try cache.setObject(Data([2]), forKey: "written-\(parts[1])")
            emitLine("DONE \(parts[1])")
        }
    }

    func testAReadAfterAnotherProcesssWriteIsTheMoreRecentAccess() throws {
        let directory = try TemporaryDirectory("kvcache-coarse-pair")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let worker = try ChildProcess(test: "KVCacheTests.KVCacheCoarseStampTwoProcessReviewTests/testWriterWorker",
                                      environment: ["KVCACHE_COARSE_PAIR_PATH": directory.path])
        XCTAssertTrue(worker.waitUntilReady(timeout: 60))
        var wrong: [Int] = []
        for round in 0..<8 {
            try cache.removeAllObjects()
            try cache.setObject(Data([1]), forKey: "read-\(round)")
            usleep(10_000)
            try worker.send("w \(round)")
            let deadline = Date().addingTimeInterval(30)
            while !worker.outputSoFar.contains("DONE \(round)\n") && Date() < deadline { usleep(50) }
            XCTAssertNotNil(try cache.object(forKey: "read-\(round)")) // after the other process's write returned
            try cache.trim(toCount: 1)
            if try !cache.containsObject(forKey: "read-\(round)") { wrong.append(round) }
        }
        try worker.send("quit")
        _ = worker.finish()
        XCTAssertEqual(worker.process.terminationStatus, 0)
        XCTAssertEqual(wrong, [], "trim(toCount: 1) removed the value read last, kept the other process's older write (rounds \(wrong))")
    }
}
