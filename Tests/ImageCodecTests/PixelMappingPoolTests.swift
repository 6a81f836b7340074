@testable import ImageCodec
import Dispatch
import Synchronization
import XCTest

/// `PixelMappingPool`: freed bitmap mappings are reused without page faults, never by two owners at once,
/// zeroed when asked, and the pool stays within its count and byte bounds.
final class PixelMappingPoolTests: XCTestCase {
    override func setUp() { PixelMappingPool.drain() }
    override func tearDown() { PixelMappingPool.drain() }

    private func address(_ buffer: PixelBuffer) -> UInt { UInt(bitPattern: buffer.storage.pointer) }

    func testAFreedBitmapsMappingServesTheNextOfItsSizeZeroedWhenAsked() throws {
        var first: PixelBuffer? = try PixelBuffer(width: 1024, height: 512, pixelFormat: .rgba8Premultiplied, zeroed: false)  // 2 MiB
        first!.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0xAB) }
        let firstAddress = address(first!)
        first = nil
        XCTAssertEqual(PixelMappingPool.keptMappings.count, 1)
        let second = try PixelBuffer(width: 1024, height: 512)  // zeroed (the default)
        XCTAssertEqual(address(second), firstAddress, "the kept mapping was not reused")
        XCTAssertEqual(PixelMappingPool.keptMappings.count, 0, "a reused mapping is still in the pool")
        second.withUnsafeBytes { bytes in
            XCTAssertTrue(bytes.allSatisfy { $0 == 0 }, "a reused mapping handed out with an earlier bitmap's bytes")
        }
    }

    func testOnlyMappingsOfAboutTheRightSizeAreReused() throws {
        var two: PixelBuffer? = try PixelBuffer(width: 1024, height: 512)  // 2 MiB
        let twoAddress = address(two!)
        two = nil
        // 4 MiB does not fit in 2 MiB; 1.5 MiB would leave more than a quarter unused.
        let four = try PixelBuffer(width: 1024, height: 1024)
        let smaller = try PixelBuffer(width: 768, height: 512)
        XCTAssertNotEqual(address(four), twoAddress)
        XCTAssertNotEqual(address(smaller), twoAddress)
        // 1.8 MiB fits with less than a quarter to spare.
        let close = try PixelBuffer(width: 900, height: 512)
        XCTAssertEqual(address(close), twoAddress)
    }

    func testThePoolKeepsAtMostFourMappingsAnd64MiB() throws {
        for _ in 0..<3 {
            var buffers = try (0..<10).map { _ in try PixelBuffer(width: 1920, height: 1080) }  // 8.3 MB each
            buffers.removeAll()
            XCTAssertLessThanOrEqual(PixelMappingPool.keptMappings.count, PixelMappingPool.maximumMappings)
            XCTAssertLessThanOrEqual(PixelMappingPool.keptMappings.bytes, PixelMappingPool.maximumBytes)
        }
        XCTAssertEqual(PixelMappingPool.keptMappings.count, PixelMappingPool.maximumMappings)
        // One bitmap over the byte bound is unmapped, not kept; 48 MB pushes older ones out.
        var huge: PixelBuffer? = try PixelBuffer(width: 4200, height: 4200)  // 70.6 MB
        huge = nil
        XCTAssertLessThanOrEqual(PixelMappingPool.keptMappings.bytes, PixelMappingPool.maximumBytes)
        var large: PixelBuffer? = try PixelBuffer(width: 4000, height: 3000)
        large = nil
        let kept = PixelMappingPool.keptMappings
        XCTAssertLessThanOrEqual(kept.bytes, PixelMappingPool.maximumBytes)
        XCTAssertGreaterThanOrEqual(kept.bytes, 48_000_000, "the newest bitmap was pushed out instead of the oldest")
        _ = huge; _ = large
    }

    /// Eight threads allocate, fill with their own pattern, check and free bitmaps of a few sizes, so kept
    /// mappings change hands all the time: a mapping given to two live bitmaps shows as a foreign byte.
    func testRacingThreadsNeverShareAMapping() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        let failures = Mutex<[String]>([])
        let sides = [(1024, 256), (1024, 300), (1024, 512), (1200, 600), (2048, 512)]
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var state = seed &+ UInt64(thread) &* 0x9E37_79B9_7F4A_7C15
            func next() -> Int {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int(truncatingIfNeeded: state >> 33)
            }
            var live: [(PixelBuffer, UInt8)] = []
            for round in 0..<300 {
                if live.count < 3 || next() % 2 == 0 {
                    let (w, h) = sides[next() % sides.count]
                    guard var buffer = try? PixelBuffer(width: w, height: h, pixelFormat: .rgba8Premultiplied, zeroed: next() % 2 == 0) else { continue }
                    let mark = UInt8(truncatingIfNeeded: thread * 31 + round)
                    buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: mark) }
                    live.append((buffer, mark))
                } else {
                    let (buffer, mark) = live.remove(at: next() % live.count)
                    // One byte per page and the last one: a mapping shared with another bitmap is refilled whole.
                    let intact = buffer.withUnsafeBytes { bytes in
                        stride(from: 0, to: bytes.count, by: 4096).allSatisfy { bytes[$0] == mark } && bytes[bytes.count - 1] == mark
                    }
                    if !intact { failures.withLock { $0.append("thread \(thread) round \(round)") } }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [], "seed \(seed): a bitmap's bytes were overwritten by another's")
    }
}
