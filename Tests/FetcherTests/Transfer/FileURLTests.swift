import Fetcher
import Foundation
import XCTest

/// `file://` URLs are read by the fetcher's own `FileSource` (never libcurl); failures name the path and the real `errno`.
final class FileURLTests: FetchTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("fetcher-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
        super.tearDown()
    }

    func testReadsAFile() throws {
        let file = folder.appendingPathComponent("bytes.bin")
        let payload = testPayload(70_000)
        try payload.write(to: file)
        let events = fetchAndWait(FetchRequest(url: file), on: queue)
        XCTAssertNil(events.error)
        XCTAssertEqual(events.chunks.reduce(Data(), +), payload)
    }

    func testMissingFileIsENOENT() {
        let missing = folder.appendingPathComponent("absent.png")
        let events = fetchAndWait(FetchRequest(url: missing), on: queue)
        XCTAssertEqual(events.error, .fileUnreadable(path: missing.path, errno: ENOENT))
    }

    func testDirectoryIsEISDIRNotAnEmptyBody() {
        let events = fetchAndWait(FetchRequest(url: folder), on: queue)
        XCTAssertEqual(events.error, .fileUnreadable(path: folder.path, errno: EISDIR))
    }
}
