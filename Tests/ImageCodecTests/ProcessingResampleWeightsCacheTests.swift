@testable import ImageCodec
import Dispatch
import Synchronization
import XCTest

/// `ResampleWeights.cached(…)`: one table per geometry, shared by threads, bounded in count and size, and
/// equal to a table built afresh.
final class ProcessingResampleWeightsCacheTests: XCTestCase {
    private func equal(_ a: ResampleWeights, _ b: ResampleWeights) -> Bool {
        guard a.destinationCount == b.destinationCount, a.stride == b.stride else { return false }
        for i in 0..<a.destinationCount {
            guard a.start[i] == b.start[i], a.length[i] == b.length[i] else { return false }
            for k in 0..<a.stride where a.weights[i * a.stride + k] != b.weights[i * b.stride + k] { return false }
        }
        return true
    }

    func testOneGeometryGivesOneTableEqualToAFreshOne() throws {
        for filter in ResamplingFilter.allCases {
            for (source, destination, block) in [(500, 300, 1), (2000, 299, 2), (17, 40, 1), (1, 1, 1), (4_097, 3, 8)] {
                let first = try ResampleWeights.cached(sourceCount: source, destinationCount: destination, filter: filter, blockFactor: block)
                let second = try ResampleWeights.cached(sourceCount: source, destinationCount: destination, filter: filter, blockFactor: block)
                XCTAssertTrue(first === second, "\(filter) \(source)→\(destination)/\(block) built twice")
                let fresh = try ResampleWeights(sourceCount: source, destinationCount: destination, filter: filter, blockFactor: block)
                XCTAssertTrue(equal(first, fresh), "\(filter) \(source)→\(destination)/\(block): the cached table differs")
            }
        }
        // Another block factor or filter is another table.
        let a = try ResampleWeights.cached(sourceCount: 500, destinationCount: 300, filter: .lanczos3, blockFactor: 1)
        let b = try ResampleWeights.cached(sourceCount: 500, destinationCount: 300, filter: .lanczos3, blockFactor: 2)
        let c = try ResampleWeights.cached(sourceCount: 500, destinationCount: 300, filter: .triangle, blockFactor: 1)
        XCTAssertFalse(a === b)
        XCTAssertFalse(a === c)
    }

    func testLargeTablesAreNotKeptAndTheCountStaysBounded() throws {
        // 40,000 samples at ≥ 3 taps: past `cacheableWeights`.
        let big1 = try ResampleWeights.cached(sourceCount: 40_000, destinationCount: 40_000, filter: .lanczos3)
        let big2 = try ResampleWeights.cached(sourceCount: 40_000, destinationCount: 40_000, filter: .lanczos3)
        XCTAssertGreaterThan(big1.stride * big1.destinationCount, ResampleWeights.cacheableWeights)
        XCTAssertFalse(big1 === big2, "a table past the size bound was kept")
        for destination in 1...(ResampleWeights.cacheCapacity * 3) {
            _ = try ResampleWeights.cached(sourceCount: 1_000, destinationCount: destination, filter: .area)
            XCTAssertLessThanOrEqual(ResampleWeights.cachedTableCount, ResampleWeights.cacheCapacity)
        }
    }

    func testThreadsRacingForOneGeometryAllGetAnEqualTable() throws {
        let rounds = 150
        let got = Mutex<[Int: [ResampleWeights]]>([:])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for round in 0..<rounds {
                // A fresh geometry per round, so the threads race to build and insert it (and the cache, past
                // its capacity, is emptied while others read it).
                guard let table = try? ResampleWeights.cached(sourceCount: 3_001 + round, destinationCount: 97,
                                                              filter: .mitchell) else { continue }
                got.withLock { $0[round, default: []].append(table) }
            }
        }
        let all = got.withLock { $0 }
        XCTAssertEqual(all.count, rounds)
        for (round, tables) in all {
            XCTAssertEqual(tables.count, 8, "round \(round): a thread got no table")
            let fresh = try ResampleWeights(sourceCount: 3_001 + round, destinationCount: 97, filter: .mitchell)
            for table in tables { XCTAssertTrue(equal(table, fresh), "round \(round): a shared table differs") }
        }
    }
}
