import Foundation
import KVCache
import TestSupport
@testable import WebImage
import XCTest

/// Item 16: on a fresh machine (no `~/.cache`), the default cache folder is made with its parents, owner-only;
/// a folder that truly cannot be made leaves the shared manager a memory cache and the reason, never no cache.
final class FreshMachineCacheTests: XCTestCase {
    private var home: URL!

    override func setUpWithError() throws { home = try CLIProcess.temporaryFolder("home") }
    override func tearDown() { try? FileManager.default.removeItem(at: home) } // best effort: a temporary folder

    /// `webimage fetch URL` with `HOME` an empty folder and no `XDG_CACHE_HOME`: exit 0, and the cache is at
    /// `~/.cache/webimage/images`, every folder made 0700. Before, the one `mkdir` of `…/images` failed
    /// (ENOENT) and the command exited 1.
    func testFetchWithAnEmptyHomeMakesTheDefaultCacheFolder() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        server.route("/a.png", .bytes(try TestImages.png(), contentType: "image/png"))
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_CACHE_HOME"] = nil
        let run = try WebImageCLI.run(["fetch", server.url("/a.png").absoluteString], environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let images = home.path + "/.cache/webimage/images"
        XCTAssertTrue(FileManager.default.fileExists(atPath: images + "/manifest.sqlite"), run.stdout + run.stderr)
        for folder in [home.path + "/.cache", home.path + "/.cache/webimage", images] {
            var info = stat()
            XCTAssertEqual(stat(folder, &info), 0, folder)
            XCTAssertEqual(info.st_mode & 0o777, 0o700, folder)
        }
    }

    /// The README's service path, `/var/cache/myservice/images`, below a folder that does not exist yet.
    func testImageCacheMakesMissingParents() throws {
        let path = home.path + "/var/cache/myservice/images"
        let cache = try ImageCache(path: path)
        try cache.setImage(nil, imageData: try TestImages.png(), forKey: "k", type: .disk)
        XCTAssertNotNil(try cache.getImageData(forKey: "k"))
        XCTAssertNotNil(cache.diskCache)
        XCTAssertNil(cache.diskCacheError)
    }

    /// A cache folder below a regular file cannot be made: the shared manager's construction keeps a memory
    /// cache, says why, and still caches decoded images in memory.
    func testSharedManagerKeepsAMemoryCacheWhenTheFolderCannotBeMade() throws {
        let file = home.appendingPathComponent("not-a-folder")
        FileManager.default.createFile(atPath: file.path, contents: Data([0]))
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let manager = ImageManager.makeShared(cachePath: file.path + "/webimage/images", queue: fixture.queue)
        let cache = try XCTUnwrap(manager.cache, "the shared manager runs with no cache at all")
        XCTAssertNil(cache.diskCache)
        guard case .io(let code, _, _)? = cache.diskCacheError else { return XCTFail("no reason: \(String(describing: cache.diskCacheError))") }
        XCTAssertEqual(code, ENOTDIR)

        let url = fixture.serve("/m.png", try TestImages.png())
        XCTAssertEqual(fixture.load(url, manager: manager).source, .remote)
        XCTAssertEqual(fixture.load(url, manager: manager).source, .memoryCache, "the memory cache was not kept")
        XCTAssertTrue(try cache.containsImage(forKey: url.absoluteString))
        XCTAssertNil(try cache.getImageData(forKey: url.absoluteString))
        try cache.removeImage(forKey: url.absoluteString)
        XCTAssertEqual(fixture.load(url, manager: manager).source, .remote)
    }
}
