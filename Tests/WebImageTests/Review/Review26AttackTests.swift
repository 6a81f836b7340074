import Fetcher
import Foundation
import KVCache
import Synchronization
import TestSupport
@testable import WebImage
import XCTest

/// Review 26, adversarial pass over the `.useHTTPCache` changes (Vary, no-store after a 304, `imageData`). Each
/// test fails on the code under review because of the defect named above it.
final class Review26AttackTests: XCTestCase {
    private var directory: URL!
    private var raw: RawHTTPServer?

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("review26-attack-\(UUID().uuidString)")
    }

    override func tearDown() {
        raw?.shutdown()
        raw = nil
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - no-store after a 304, with a shared tier

    /// Defect: a 304 whose fields say `no-store` takes the entry out of the local disk only. `didFetch`'s 304 branch
    /// (ImageLoadTask+Network.swift:88-92, `removes`) calls `diskCache?.removeObject(forKey:)` and nothing else,
    /// so the shared tier (memcached: every worker of the fleet) keeps serving the bytes the origin said must not
    /// be stored — and the next request on any worker copies them back to its local disk
    /// (`loadFromSharedTier`, ImageLoadTask+SharedTier.swift:27) before revalidating.
    /// RFC 9111 §3 / §4.3.4: the 304's no-store replaces the stored directives; a cache must not keep the response.
    /// Fix: when `removes`, also call `cache.removeFromSharedTier(forKey: key)` (the API made for "a value that
    /// must not spread").
    func testA304CarryingNoStoreAlsoTakesTheEntryOutOfTheSharedTier() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, head in
            if RawImageResponse.isConditional(head) { return RawImageResponse.notModified(["ETag: \"v1\"", "Cache-Control: no-store"]) }
            return RawImageResponse.with(["ETag: \"v1\"", "Cache-Control: no-cache"], body: png)
        }
        raw = server
        let tier = DictionaryTier()
        let manager = try ImageManager.onDisk(directory, "a", tier: tier)
        let url = server.url("/no-store-304-shared.png")
        let key = url.absoluteString
        XCTAssertEqual(manager.loadAndWait(url).source, .remote)
        manager.cache?.waitForPendingWrites()
        XCTAssertTrue(manager.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertTrue(tier.contains(key), "precondition: a no-cache response is stored in the shared tier")

        let second = manager.loadAndWait(url)
        XCTAssertEqual(second.image?.width, 64)
        XCTAssertTrue(server.requestHeads(for: "/no-store-304-shared.png").last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: the second request revalidated")
        manager.cache?.waitForPendingWrites()
        XCTAssertTrue(manager.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertFalse(try manager.cache?.containsImage(forKey: key, type: .disk) ?? true,
                       "precondition: the local disk entry is removed")
        XCTAssertFalse(tier.contains(key), "after a 304 saying no-store the shared tier must not keep the response either")
    }

    /// Defect: the same for `imageData(for:options:)`: its 304 branch (ImageManager+Data.swift:78-79) removes the
    /// local disk entry (`removeImage(forKey:type: .disk)`) and leaves the shared-tier copy it wrote itself
    /// (ImageManager+Data.swift:95, `storeInSharedTier`).
    /// Fix: `cache.removeFromSharedTier(forKey: cacheKey)` beside `removeImage` when `http.noStore`.
    func testImageDataA304CarryingNoStoreAlsoTakesTheEntryOutOfTheSharedTier() async throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, head in
            if RawImageResponse.isConditional(head) { return RawImageResponse.notModified(["ETag: \"v1\"", "Cache-Control: no-store"]) }
            return RawImageResponse.with(["ETag: \"v1\"", "Cache-Control: no-cache"], body: png)
        }
        raw = server
        let tier = DictionaryTier()
        let manager = try ImageManager.onDisk(directory, "b", tier: tier)
        let url = server.url("/no-store-304-data.png")
        let key = url.absoluteString
        let first = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(first.source, .remote)
        XCTAssertTrue(manager.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertTrue(tier.contains(key), "precondition: a no-cache response is stored in the shared tier")

        let second = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(second.data, png)
        XCTAssertTrue(server.requestHeads(for: "/no-store-304-data.png").last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: the second call revalidated")
        XCTAssertTrue(manager.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertFalse(try manager.cache?.containsImage(forKey: key, type: .disk) ?? true,
                       "precondition: the local disk entry is removed")
        XCTAssertFalse(tier.contains(key), "after a 304 saying no-store the shared tier must not keep the response either")
    }

    // MARK: - imageData and a stale shared-tier entry

    /// Defect: `imageData(for:options:)` documents `.useHTTPCache` as working "as `requestImage`", but a stale
    /// shared-tier entry is simply skipped (ImageManager+Data.swift:43-44, the `metadata.http.map { isFresh … }`
    /// condition) and never revalidated: `stale` is only ever set from the local disk (:37), so the request that
    /// follows is unconditional and the origin sends the whole image again, where `requestImage` writes the
    /// entry to disk and revalidates it with its `ETag` (`loadFromSharedTier`, ImageLoadTask+SharedTier.swift:26-28)
    /// and gets a 304. Every worker of an image service with a fresh local disk re-downloads every stale source.
    /// Fix: when the shared entry is not fresh for this request, keep it as `stale` (written to disk as
    /// `loadFromSharedTier` does) so its validators are sent.
    func testImageDataRevalidatesAStaleSharedTierEntryAsRequestImageDoes() async throws {
        let old = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, head in
            if RawImageResponse.isConditional(head) { return RawImageResponse.notModified(["ETag: \"v1\"", "Cache-Control: no-cache"]) }
            return RawImageResponse.with(["ETag: \"v1\"", "Cache-Control: no-cache"], body: old)
        }
        raw = server
        let path = "/stale-shared.png"
        let url = server.url(path)
        let tier = DictionaryTier()
        // Worker A fetches the source: stored, with its ETag, in the shared tier (no-cache: stale at once).
        let workerA = try ImageManager.onDisk(directory, "worker-a", tier: tier)
        _ = try await workerA.imageData(for: url, options: [.useHTTPCache])
        XCTAssertTrue(workerA.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertTrue(tier.contains(url.absoluteString), "precondition: the source is in the shared tier")

        // Control: requestImage on a fresh worker revalidates the stale shared entry (a 304).
        let workerB = try ImageManager.onDisk(directory, "worker-b", tier: tier)
        XCTAssertEqual(workerB.loadAndWait(url).image?.width, 64)
        XCTAssertTrue(server.requestHeads(for: path).last.map(RawImageResponse.isConditional) ?? false,
                      "precondition: requestImage revalidates a stale shared entry with its validators")

        // imageData on another fresh worker must do the same.
        let workerC = try ImageManager.onDisk(directory, "worker-c", tier: tier)
        let got = try await workerC.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(got.data, old)
        let heads = server.requestHeads(for: path)
        XCTAssertEqual(heads.count, 3)
        XCTAssertTrue(heads.last.map(RawImageResponse.isConditional) ?? false,
                      "imageData must revalidate the stale shared entry (If-None-Match), not fetch the whole source again")
        XCTAssertNotEqual(got.source, .remote, "a 304 serves the shared bytes")
    }

    // MARK: - Vary: what is kept

    /// Defect: `recordVary` (HTTPCachePolicy.swift:109; `updateVary` :123 alike) keeps the request's raw values of every field `Vary`
    /// names, and they are written in clear beside the bytes on disk (extended data, JSON) and into every
    /// shared-tier envelope (SharedTierEnvelope.encode: the metadata JSON). An origin that answers
    /// `Vary: Authorization` (or `Cookie`, or an API-key header) — common for per-user images — thus has the
    /// manager's bearer token written to the cache folder and spread to the whole memcached fleet. Browsers do not
    /// keep these values in clear: Chromium's `HttpVaryData` keeps an MD5 digest of them, Firefox hashes `Cookie`.
    /// Only equality is ever needed (`matchesVary`).
    /// Fix: store a digest of each value (SHA-256 of the trimmed value, e.g. `"sha256:…"`) and compare digests
    /// in `matchesVary`; an absent field stays `nil`.
    func testVaryDoesNotWriteTheRequestsCredentialsToTheCaches() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, _ in
            RawImageResponse.with(["Cache-Control: max-age=600", "ETag: \"v1\"", "Vary: Authorization"], body: png)
        }
        raw = server
        let tier = DictionaryTier()
        let manager = try ImageManager.onDisk(directory, "c", tier: tier)
        let secret = "s3cr3t-bearer-token-0123456789"
        manager.headers = ["Accept": "image/png", "Authorization": "Bearer \(secret)"]
        let url = server.url("/per-user.png")
        XCTAssertEqual(manager.loadAndWait(url).source, .remote)
        manager.cache?.waitForPendingWrites()
        XCTAssertTrue(manager.cache?.waitForPendingSharedWrites() ?? false)
        let metadata = try XCTUnwrap(try manager.cache?.getMetadata(forKey: url.absoluteString))
        XCTAssertNotNil(metadata.http?.variedRequestFields, "precondition: the Vary was recorded")
        let onDisk = String(decoding: try JSONEncoder().encode(metadata), as: UTF8.self)
        XCTAssertFalse(onDisk.contains(secret), "the bearer token is written to the disk cache in clear: \(onDisk)")
        let envelope = try XCTUnwrap(tier.envelope(url.absoluteString))
        XCTAssertNil(envelope.range(of: Data(secret.utf8)), "the bearer token is spread to the shared tier in clear")
    }
}
