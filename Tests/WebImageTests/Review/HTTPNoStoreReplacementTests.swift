import Fetcher
import Foundation
import Synchronization
import TestSupport
@testable import WebImage
import XCTest

/// A stored image that a revalidation (or a refresh) replaces with a response the cache may not store.
///
/// Defect: when a stale entry was revalidated (`.useHTTPCache`, `If-None-Match`) and the origin answered
/// `200 OK` with new bytes and `Cache-Control: no-store`, the new bytes were delivered and not stored — and the
/// old ones stayed: on disk (bytes and metadata), in the shared tier, and in memory for the key's other decoded
/// images (thumbnails). A request without `.useHTTPCache`, a fresh manager on the same folder, or another worker
/// of the fleet then got the superseded image.
/// RFC 9111 §4.3.3: a full response to a conditional request means none of the stored responses it nominated is
/// suitable; §3 / §5.2.2.5: a `no-store` response is not stored. Nothing may stay that answers for the URL.
/// (The 304 saying `no-store` already removed the entry: Review26HTTPCachingTests, Review26AttackTests.)
///
/// Each case runs against a real loopback origin (`RawHTTPServer`) that serves the old image (`ETag "v1"`,
/// `no-cache`: stale at once) to the first unconditional request and a case's own answers afterwards.
final class HTTPNoStoreReplacementTests: XCTestCase {
    private var directory: URL!
    private var raw: RawHTTPServer?
    private var old = Data(), new = Data()

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nostore-replace-\(UUID().uuidString)")
        old = try TestImages.png(width: 64, height: 48)
        new = try TestImages.png(width: 32, height: 16)
    }

    override func tearDown() {
        raw?.shutdown()
        raw = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// An origin: request 1 gets the old image (`ETag "v1"`, `no-cache`); request `n` ≥ 2 gets `answer(n, conditional)`.
    private func origin(_ answer: @escaping @Sendable (_ n: Int, _ conditional: Bool) -> [UInt8]) throws -> RawHTTPServer {
        let count = Mutex(0)
        let old = self.old
        let server = try RawHTTPServer { _, head in
            let n = count.withLock { $0 += 1; return $0 }
            if n == 1 { return RawImageResponse.with(["ETag: \"v1\"", "Cache-Control: no-cache"], body: old) }
            return answer(n, RawImageResponse.isConditional(head))
        }
        raw = server
        return server
    }

    /// The origin's new image, `ETag "v2"`, with `no-store`.
    private var newNoStore: [UInt8] { RawImageResponse.with(["ETag: \"v2\"", "Cache-Control: no-store"], body: new) }

    private func isOnDisk(_ url: URL, in manager: ImageManager) throws -> Bool {
        manager.cache?.waitForPendingWrites()
        return try manager.cache?.containsImage(forKey: url.absoluteString, type: .disk) ?? false
    }

    // MARK: - requestImage

    func testARevalidationAnsweredByANoStore200TakesTheOldImageOutOfDiskAndMemory() throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, _ in newNoStore }
        let path = "/replaced.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 64)
        XCTAssertTrue(try isOnDisk(url, in: manager), "precondition: the old image is stored")
        // The old image's thumbnail, decoded from the disk entry, now in memory too.
        XCTAssertEqual(manager.loadAndWait(url, options: [], thumbnailPixelSize: 16).image?.height, 12)

        let revalidated = manager.loadAndWait(url)
        XCTAssertNil(revalidated.error)
        XCTAssertEqual(revalidated.image?.width, 32, "the caller gets the new bytes")
        XCTAssertEqual(revalidated.source, .remote)
        let heads = server.requestHeads(for: path)
        XCTAssertEqual(heads.count, 2)
        XCTAssertTrue(heads.last.map(RawImageResponse.isConditional) ?? false, "precondition: the second request revalidated")

        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        XCTAssertNil(try manager.cache?.getMetadata(forKey: url.absoluteString), "nor their metadata")
        let restarted = try ImageManager.onDisk(directory, "a")
        let plain = restarted.loadAndWait(url, options: [])
        XCTAssertEqual(plain.image?.width, 32, "a restarted process must not get the superseded image from disk")
        XCTAssertEqual(plain.source, .remote)
        let thumbnail = manager.loadAndWait(url, options: [], thumbnailPixelSize: 16)
        XCTAssertEqual(thumbnail.image?.height, 8, "the superseded image's thumbnail must not be served from memory")
    }

    func testARevalidationAnsweredByANoStore200TakesTheOldImageOutOfTheSharedTier() throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, _ in newNoStore }
        let path = "/replaced-shared.png"
        let url = server.url(path)
        let key = url.absoluteString
        let tier = DictionaryTier()
        let workerA = try ImageManager.onDisk(directory, "a", tier: tier)
        XCTAssertEqual(workerA.loadAndWait(url).image?.width, 64)
        workerA.cache?.waitForPendingWrites()
        XCTAssertTrue(workerA.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertTrue(tier.contains(key), "precondition: the old image is in the shared tier")

        XCTAssertEqual(workerA.loadAndWait(url).image?.width, 32)
        XCTAssertTrue(server.requestHeads(for: path).last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: the second request revalidated")
        XCTAssertTrue(workerA.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertFalse(tier.contains(key), "the superseded bytes must not stay in the shared tier")
        let workerB = try ImageManager.onDisk(directory, "b", tier: tier)
        let plain = workerB.loadAndWait(url, options: [])
        XCTAssertEqual(plain.image?.width, 32, "another worker must not get the superseded image from the shared tier")
        XCTAssertEqual(plain.source, .remote)
    }

    /// The same after a 304 that could not freshen the entry (another `ETag`): the image is fetched again, no-store.
    func testANoStore200FetchedAfterA304NamingAnotherTagTakesTheOldImageOut() throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, conditional in
            conditional ? RawImageResponse.notModified(["ETag: \"v2\"", "Cache-Control: no-cache"]) : newNoStore
        }
        let path = "/replaced-after-304.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 64)
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 32)
        let heads = server.requestHeads(for: path)
        XCTAssertEqual(heads.count, 3, "precondition: revalidated (304 \"v2\"), then fetched again")
        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        let plain = try ImageManager.onDisk(directory, "a").loadAndWait(url, options: [])
        XCTAssertEqual(plain.image?.width, 32)
        XCTAssertEqual(plain.source, .remote)
    }

    /// `.refreshImageCache` skips the lookup and replaces what the caches hold: a no-store answer leaves nothing.
    func testARefreshAnsweredByANoStore200TakesTheOldImageOut() throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, _ in newNoStore }
        let url = server.url("/refreshed.png")
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url, options: []).image?.width, 64)
        XCTAssertTrue(try isOnDisk(url, in: manager), "precondition: the old image is stored")
        XCTAssertEqual(manager.loadAndWait(url, options: [.useHTTPCache, .refreshImageCache]).image?.width, 32)
        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        let plain = try ImageManager.onDisk(directory, "a").loadAndWait(url, options: [])
        XCTAssertEqual(plain.image?.width, 32)
        XCTAssertEqual(plain.source, .remote)
    }

    /// Not a whole representation: a 206 answering the revalidation (not a 304) says the stored bytes are not
    /// current, and it cannot be stored in their place (RFC 9111 §3.3): the old entry goes.
    func testARevalidationAnsweredByA206TakesTheOldImageOut() throws {
        let new = self.new
        let server = try origin { _, _ in
            RawImageResponse.with(status: "206 Partial Content",
                                  ["Content-Range: bytes 0-\(new.count - 1)/\(new.count)", "ETag: \"v2\"",
                                   "Cache-Control: max-age=600"], body: new)
        }
        let path = "/replaced-206.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 64)
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 32)
        XCTAssertTrue(server.requestHeads(for: path).last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: the second request revalidated")
        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        let plain = try ImageManager.onDisk(directory, "a").loadAndWait(url, options: [])
        XCTAssertEqual(plain.image?.width, 32)
        XCTAssertEqual(plain.source, .remote)
    }

    /// Control: `Vary: *` does not make a response unstorable (RFC 9111 §4.1 only makes it never match without
    /// asking the origin), so the new bytes replace the old ones on disk.
    func testARevalidationAnsweredByAVaryStar200ReplacesTheStoredImage() throws {
        let new = self.new
        let server = try origin { _, _ in
            RawImageResponse.with(["ETag: \"v2\"", "Cache-Control: max-age=600", "Vary: *"], body: new)
        }
        let url = server.url("/replaced-vary-star.png")
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 64)
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 32)
        manager.cache?.waitForPendingWrites()
        XCTAssertEqual(try manager.cache?.getImageData(forKey: url.absoluteString), new)
        let plain = try ImageManager.onDisk(directory, "a").loadAndWait(url, options: [])
        XCTAssertEqual(plain.image?.width, 32)
        XCTAssertEqual(plain.source, .diskCache)
    }

    /// Defect (found beside the above): a storable 200 replacing the stored image records the URL as fresh in the
    /// memory freshness table (`FreshnessTable`, by cache key); the old image's thumbnail, still in memory under
    /// the same key, then passed for fresh with it and was served to `.useHTTPCache` for the new one's lifetime.
    func testAStorable200ReplacingTheImageDoesNotLetItsOldThumbnailPassForFresh() throws {
        let new = self.new
        let server = try origin { n, conditional in
            // The thumbnail's revalidation (request 2) is confirmed; the next one gets new bytes, fresh for 10 min.
            n == 2 && conditional ? RawImageResponse.notModified(["ETag: \"v1\"", "Cache-Control: no-cache"])
                : RawImageResponse.with(["ETag: \"v2\"", "Cache-Control: max-age=600"], body: new)
        }
        let path = "/replaced-storable.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 64)
        XCTAssertEqual(manager.loadAndWait(url, thumbnailPixelSize: 16).image?.height, 12, "precondition: old thumbnail")
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 32, "precondition: the new bytes replaced the old")
        XCTAssertEqual(server.requestHeads(for: path).count, 3)
        let thumbnail = manager.loadAndWait(url, thumbnailPixelSize: 16)
        XCTAssertEqual(thumbnail.image?.height, 8, "the old image's thumbnail must not pass for fresh from memory")
    }

    // MARK: - Disk prefetch

    func testADiskPrefetchRefreshAnsweredByANoStore200TakesTheOldBytesOut() async throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, _ in newNoStore }
        let url = server.url("/prefetch-refreshed.png")
        let manager = try ImageManager.onDisk(directory, "a")
        XCTAssertEqual(manager.loadAndWait(url, options: []).image?.width, 64)
        XCTAssertTrue(try isOnDisk(url, in: manager), "precondition: the old image is stored")
        let prefetcher = ImagePrefetcher(manager: manager, destination: .diskCache,
                                         options: [.useHTTPCache, .refreshImageCache])
        _ = await prefetcher.prefetch([url])
        XCTAssertEqual(server.requestHeads(for: "/prefetch-refreshed.png").count, 2, "precondition: fetched again")
        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
    }

    // MARK: - imageData(for:options:)

    func testImageDataRevalidationAnsweredByANoStore200TakesTheOldBytesOut() async throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, _ in newNoStore }
        let path = "/data-replaced.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        let first = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(first.data, old)
        // The old image decoded into memory from the disk entry (no request).
        XCTAssertEqual(manager.loadAndWait(url, options: []).image?.width, 64)

        let second = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(second.data, new, "the caller gets the new bytes")
        XCTAssertEqual(second.source, .remote)
        let heads = server.requestHeads(for: path)
        XCTAssertEqual(heads.count, 2)
        XCTAssertTrue(heads.last.map(RawImageResponse.isConditional) ?? false, "precondition: the second call revalidated")

        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        let restarted = try await ImageManager.onDisk(directory, "a").imageData(for: url, options: [])
        XCTAssertEqual(restarted.data, new, "a restarted process must not get the superseded bytes from disk")
        XCTAssertEqual(restarted.source, .remote)
        XCTAssertNotEqual(manager.loadAndWait(url, options: []).image?.width, 64,
                          "the superseded image must not be served from memory")
    }

    func testImageDataRevalidationAnsweredByANoStore200TakesTheOldBytesOutOfTheSharedTier() async throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, _ in newNoStore }
        let path = "/data-replaced-shared.png"
        let url = server.url(path)
        let key = url.absoluteString
        let tier = DictionaryTier()
        let workerA = try ImageManager.onDisk(directory, "a", tier: tier)
        _ = try await workerA.imageData(for: url, options: [.useHTTPCache])
        XCTAssertTrue(workerA.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertTrue(tier.contains(key), "precondition: the old bytes are in the shared tier")

        let second = try await workerA.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(second.data, new)
        XCTAssertTrue(server.requestHeads(for: path).last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: the second call revalidated")
        XCTAssertTrue(workerA.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertFalse(tier.contains(key), "the superseded bytes must not stay in the shared tier")
        let workerB = try await ImageManager.onDisk(directory, "b", tier: tier).imageData(for: url, options: [])
        XCTAssertEqual(workerB.data, new, "another worker must not get the superseded bytes from the shared tier")
        XCTAssertEqual(workerB.source, .remote)
    }

    /// The same after a 304 that could not freshen the entry (another `ETag`).
    func testImageDataNoStore200FetchedAfterA304NamingAnotherTagTakesTheOldBytesOut() async throws {
        let newNoStore = self.newNoStore
        let server = try origin { _, conditional in
            conditional ? RawImageResponse.notModified(["ETag: \"v2\"", "Cache-Control: no-cache"]) : newNoStore
        }
        let path = "/data-replaced-after-304.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        _ = try await manager.imageData(for: url, options: [.useHTTPCache])
        let second = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(second.data, new)
        XCTAssertEqual(server.requestHeads(for: path).count, 3, "precondition: revalidated (304 \"v2\"), then fetched again")
        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        let restarted = try await ImageManager.onDisk(directory, "a").imageData(for: url, options: [])
        XCTAssertEqual(restarted.data, new)
        XCTAssertEqual(restarted.source, .remote)
    }

    func testImageDataRevalidationAnsweredByA206TakesTheOldBytesOut() async throws {
        let new = self.new
        let server = try origin { _, _ in
            RawImageResponse.with(status: "206 Partial Content",
                                  ["Content-Range: bytes 0-\(new.count - 1)/\(new.count)", "ETag: \"v2\"",
                                   "Cache-Control: max-age=600"], body: new)
        }
        let path = "/data-replaced-206.png"
        let url = server.url(path)
        let manager = try ImageManager.onDisk(directory, "a")
        _ = try await manager.imageData(for: url, options: [.useHTTPCache])
        let second = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(second.data, new)
        XCTAssertTrue(server.requestHeads(for: path).last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: the second call revalidated")
        XCTAssertFalse(try isOnDisk(url, in: manager), "the superseded bytes must not stay on disk")
        let restarted = try await ImageManager.onDisk(directory, "a").imageData(for: url, options: [])
        XCTAssertEqual(restarted.data, new)
        XCTAssertEqual(restarted.source, .remote)
    }
}
