import WebImage
import XCTest

/// `import WebImage` alone must bring the three layers in (Exports.swift).
final class ExportsTests: XCTestCase {
    func testUmbrellaReExportsTheLayers() {
        XCTAssertEqual(ImageFormat.sniff([0xFF, 0xD8, 0xFF, 0xE0]), .jpeg)
        XCTAssertFalse(KVCacheModule.version.isEmpty)
        XCTAssertFalse(FetcherModule.version.isEmpty)
    }
}
