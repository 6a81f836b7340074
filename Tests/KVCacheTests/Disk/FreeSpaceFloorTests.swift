import Foundation
@testable import KVCache
import XCTest

/// The free-space floor on small volumes: at most a share of the volume, so a 1 GiB floor does not empty the
/// cache at every trim of a 4 GiB SD card or a small container overlay.
final class FreeSpaceFloorTests: XCTestCase {
    private let gib: Int64 = 1 << 30

    func testTheFloorIsAShareOfASmallVolume() {
        XCTAssertEqual(FreeDiskSpace.floor(limit: gib, volumeSize: 4 * gib, share: 0.05), 214_748_364)
        XCTAssertEqual(FreeDiskSpace.floor(limit: gib, volumeSize: 100 * gib, share: 0.05), gib, "a large volume keeps the limit")
        XCTAssertEqual(FreeDiskSpace.floor(limit: gib, volumeSize: 4 * gib, share: 1), gib, "share 1: the limit as set")
        XCTAssertEqual(FreeDiskSpace.floor(limit: 0, volumeSize: 4 * gib, share: 0.05), 0, "off stays off")
        XCTAssertEqual(FreeDiskSpace.floor(limit: gib, volumeSize: 0, share: 0.05), gib, "unknown size: the limit")
        XCTAssertEqual(FreeDiskSpace.floor(limit: .max, volumeSize: .max, share: 0.05), Int64(Double(Int64.max) * 0.05))
    }

    /// A cache on this machine's volume with a floor larger than the volume: the whole cache is trimmed (the
    /// floor cannot be met), with share 1; with the default share the floor is 5 % of the volume and, when
    /// that much is free, nothing is trimmed.
    func testATrimHonoursTheShareOnARealVolume() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("floor-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let cache = try DiskCache(path: path)
        for index in 0..<10 { try cache.setObject(Data(repeating: UInt8(index), count: 1_000), forKey: "k\(index)") }
        let volume = try XCTUnwrap(FreeDiskSpace.volume(atPath: path))
        cache.freeDiskSpaceLimit = volume.size * 2
        XCTAssertEqual(cache.freeDiskSpaceVolumeShare, DiskCache.defaultFreeDiskSpaceVolumeShare)
        if volume.available > volume.size / 20 + (64 << 20) {
            try cache.trimToLimits()
            XCTAssertEqual(try cache.totalCount(), 10, "5 % of the volume is free: nothing to trim")
        }
        cache.freeDiskSpaceVolumeShare = 1
        try cache.trimToLimits()
        XCTAssertEqual(try cache.totalCount(), 0, "a floor above the volume's size: everything goes")
    }
}
