@testable import WebImage
import Foundation
import XCTest

/// The map of per-folder I/O queues holds only queues some `ImageCache` still uses (it used to keep one
/// queue per path ever opened, for the life of the process).
final class ImageCacheQueueTests: XCTestCase {
    func testIOQueuesOfDeadCachesAreDropped() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ioqueues-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let before = ImageCache.ioQueueEntryCount
        for i in 0..<30 {
            let cache = try ImageCache(path: root + "/c\(i)")
            cache.waitForPendingWrites()
        }
        let live = try ImageCache(path: root + "/live")
        let again = try ImageCache(path: root + "/live")
        XCTAssertTrue(live.ioQueue === again.ioQueue, "caches of one folder share its queue")
        XCTAssertLessThanOrEqual(ImageCache.ioQueueEntryCount, before + 2)
    }
}
