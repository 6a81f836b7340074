import KVCache
import XCTest

final class KVCacheModuleTests: XCTestCase {
    func testModuleLinks() { XCTAssertEqual(KVCacheModule.version.split(separator: ".").count, 3) }
}
