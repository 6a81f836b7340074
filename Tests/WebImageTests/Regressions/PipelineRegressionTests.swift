import Fetcher
import Foundation
import ImageCodec
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Regressions of the pipeline found by review of f51e949: a completion lost with its manager, reduced images
/// under the plain memory key, priority inversion, and callbacks overlapping the terminal one.
final class PipelineRegressionTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    // MARK: Ownership

    /// Releasing the manager while its request is on the network does not lose the completion: a setter's
    /// completion (and so its operation) still runs, exactly once, with the image; so does a plain request's.
    func testReleasedManagerStillCompletesItsRequests() throws {
        fixture.server.route("/slow.png", .bytes(try TestImages.png(), contentType: "image/png").delayed(by: 0.4))
        fixture.server.route("/missing.png", HTTPTestResponse.status(404).delayed(by: 0.4))
        let url = fixture.server.url("/slow.png")
        let setter = ImageSetter()
        let display = DispatchQueue(label: "display")
        let setterDone = expectation(description: "setter completion")
        let requestDone = expectation(description: "request completion")
        let calls = Mutex(0)
        weak var released: ImageManager?
        do {
            let directory = fixture.directory.appendingPathComponent("released")
            let manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 2))
            released = manager
            setter.setImage(with: url, manager: manager, queue: display, apply: { _ in }) { image, _, _, stage, _ in
                XCTAssertEqual(stage, .finished)
                XCTAssertNotNil(image)
                calls.withLock { $0 += 1 }
                setterDone.fulfill()
            }
            manager.requestImage(url: fixture.server.url("/missing.png")) { _, _, _, stage, error in
                XCTAssertEqual(stage, .finished) // a 404 here: what matters is that it comes
                XCTAssertNotNil(error)
                requestDone.fulfill()
            }
        }
        XCTAssertNil(released, "the manager is gone while its requests are in flight")
        wait(for: [setterDone, requestDone], timeout: 10)
        display.sync {}
        XCTAssertEqual(calls.withLock { $0 }, 1)
    }

    // MARK: Memory key

    /// A request for the first frame, or for straight alpha, stores its reduced image under its own memory key:
    /// a plain request after it (setters' synchronous hits included) gets the full image.
    func testDecodeOptionsDoNotLeakReducedImagesToPlainRequests() throws {
        let url = fixture.serve("/anim.png", try TestImages.apng(frames: 3), contentType: "image/apng")
        let firstOnly = fixture.load(url, options: [.ignoreAnimatedImage])
        XCTAssertEqual(firstOnly.image?.frameCount, 1)
        let straight = fixture.load(url, options: [.ignoreImageDecoding])
        XCTAssertEqual(straight.image?.isDecodedForDisplay, false)
        let plain = fixture.load(url)
        XCTAssertEqual(plain.image?.frameCount, 3, "all frames for a plain request")
        XCTAssertEqual(plain.image?.isDecodedForDisplay, true)
        // Each variant is now a memory hit, and the right one.
        XCTAssertEqual(fixture.load(url, options: [.ignoreAnimatedImage]).source, .memoryCache)
        XCTAssertEqual(fixture.load(url, options: [.ignoreAnimatedImage]).image?.frameCount, 1)
        XCTAssertEqual(fixture.load(url).image?.frameCount, 3)
        XCTAssertEqual(fixture.load(url, options: [.ignoreImageDecoding]).image?.isDecodedForDisplay, false)

        // A setter on its own display queue gets the full image synchronously after a reduced request.
        let other = fixture.serve("/anim2.png", try TestImages.apng(frames: 3), contentType: "image/apng")
        XCTAssertEqual(fixture.load(other, options: [.ignoreAnimatedImage, .ignoreImageDecoding]).image?.frameCount, 1)
        XCTAssertEqual(setterImage(other)?.frameCount, 3)
        XCTAssertEqual(setterImage(other)?.isDecodedForDisplay, true)
    }

    /// The cache-wide settings are part of the key too: images decoded while they reduce stay apart from
    /// plain requests made after they are back to the defaults.
    func testCacheWideDecodeSettingsDoNotLeakReducedImages() throws {
        let url = fixture.serve("/cachewide.png", try TestImages.apng(frames: 3), contentType: "image/apng")
        let cache = try XCTUnwrap(fixture.manager.cache)
        cache.allowAnimatedImage = false
        cache.decodeForDisplay = false
        let reduced = fixture.load(url)
        XCTAssertEqual(reduced.image?.frameCount, 1)
        XCTAssertEqual(reduced.image?.isDecodedForDisplay, false)
        XCTAssertEqual(try cache.getImage(forKey: url.absoluteString)?.frameCount, 1)
        cache.allowAnimatedImage = true
        cache.decodeForDisplay = true
        let full = fixture.load(url)
        XCTAssertEqual(full.image?.frameCount, 3)
        XCTAssertEqual(full.image?.isDecodedForDisplay, true)
        XCTAssertEqual(setterImage(url)?.frameCount, 3)
        XCTAssertEqual(try cache.getImage(forKey: url.absoluteString)?.frameCount, 3)
    }

    /// The image a setter applies for `url` when called on its display queue (a memory hit is applied at once).
    private func setterImage(_ url: URL, options: ImageOptions = []) -> Image? {
        let display = DispatchQueue(label: "display")
        let applied = Mutex<Image?>(nil)
        let done = expectation(description: "setter")
        let setter = ImageSetter()
        display.sync {
            setter.setImage(with: url, options: options.union(.ignorePlaceholder), manager: fixture.manager,
                            queue: display, apply: { image in applied.withLock { $0 = image } }) { _, _, _, _, _ in
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 10)
        return applied.withLock { $0 }
    }

    // MARK: Priorities

    /// A `.highPriority` request joining a `.lowPriority` load (a prefetch) raises it: with one slot, it is
    /// served before normal requests queued earlier. When the high caller cancels, the load drops back.
    func testHighPriorityCallerRaisesSharedLowPriorityLoad() throws {
        fixture.server.route("/p", .bytes(try TestImages.png(), contentType: "image/png"))
        let queue = FetchQueue(maxConcurrentTransfers: 1)
        let manager = ImageManager(cache: nil, queue: queue)
        let url = { (name: String) in URL(string: self.fixture.server.url("/p").absoluteString + "?" + name)! }
        queue.suspend()
        var expectations: [XCTestExpectation] = []
        func request(_ name: String, _ options: ImageOptions) -> ImageOperation {
            let done = expectation(description: name)
            expectations.append(done)
            return manager.requestImage(url: url(name), options: options) { _, _, _, _, _ in done.fulfill() }
        }
        // Given a prefetch-like low request, normal ones, and a high request for the prefetched image…
        _ = request("x", [.lowPriority])
        for index in 0..<5 { _ = request("n\(index)", []) }
        _ = request("x", [.highPriority])
        // …and another low one joined by a high caller that cancels.
        _ = request("y", [.lowPriority])
        request("y", [.highPriority]).cancel()
        queue.resume()
        wait(for: expectations, timeout: 20)
        XCTAssertEqual(fixture.server.requests(for: "/p").map(\.uri),
                       ["/p?x", "/p?n0", "/p?n1", "/p?n2", "/p?n3", "/p?n4", "/p?y"])
    }

    // MARK: Callback order

    /// `cancel()` while a progress callback runs on the network thread: the terminal `.cancelled` comes after
    /// that callback returns, never during it, and no progress follows it.
    func testTerminalCallbackNeverOverlapsProgress() throws {
        let data = try TestImages.png(width: 256, height: 256)
        fixture.server.route("/drip.png", .drip(data, chunk: 1_024, interval: 0.01))
        let url = fixture.server.url("/drip.png")
        let inProgress = Mutex(false)
        let terminalSeen = Mutex(false)
        let violations = Mutex<[String]>([])
        let progressEntered = DispatchSemaphore(value: 0)
        let cancelReturned = DispatchSemaphore(value: 0)
        let first = Mutex(true)
        let done = expectation(description: "terminal")
        let operation = fixture.manager.requestImage(url: url, options: [.ignoreDiskCache], progress: { _, _ in
            if terminalSeen.withLock({ $0 }) { violations.withLock { $0.append("progress after the terminal call") } }
            guard first.withLock({ f in defer { f = false }; return f }) else { return }
            inProgress.withLock { $0 = true }
            progressEntered.signal()
            _ = cancelReturned.wait(timeout: .now() + 10)
            inProgress.withLock { $0 = false }
        }) { _, _, _, stage, _ in
            if stage == .progress { return }
            if inProgress.withLock({ $0 }) { violations.withLock { $0.append("terminal call during a progress call") } }
            terminalSeen.withLock { $0 = true }
            XCTAssertEqual(stage, .cancelled)
            done.fulfill()
        }
        XCTAssertEqual(progressEntered.wait(timeout: .now() + 10), .success)
        operation.cancel()
        cancelReturned.signal()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(violations.withLock { $0 }, [])
    }

    /// A setter drops the progress of a request a newer one replaced (it used to pass it through).
    func testSetterDropsProgressOfStaleRequest() throws {
        let data = try TestImages.png(width: 256, height: 256)
        fixture.server.route("/stale.png", .drip(data, chunk: 1_024, interval: 0.01))
        let url = fixture.server.url("/stale.png")
        let display = DispatchQueue(label: "display")
        let replaced = Atomic(false)
        let staleProgress = Atomic(0)
        let setter = ImageSetter()
        let staleDone = expectation(description: "stale completion")
        display.suspend()
        setter.setImage(with: url, options: [.ignorePlaceholder], manager: fixture.manager, queue: display,
                        apply: { _ in }, progress: { _, _ in
            if replaced.load(ordering: .acquiring) { staleProgress.add(1, ordering: .relaxed) }
        }) { _, _, _, stage, _ in
            XCTAssertEqual(stage, .cancelled)
            staleDone.fulfill()
        }
        // An observer of the same load: once it saw two progress calls, the setter's first one is queued.
        let observed = DispatchSemaphore(value: 0)
        let observer = fixture.manager.requestImage(url: url, progress: { _, _ in observed.signal() }) { _, _, _, _, _ in }
        XCTAssertEqual(observed.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(observed.wait(timeout: .now() + 10), .success)
        replaced.store(true, ordering: .releasing)
        setter.cancel()
        display.resume()
        wait(for: [staleDone], timeout: 10)
        display.sync {}
        observer.cancel()
        XCTAssertEqual(staleProgress.load(ordering: .relaxed), 0, "no progress of a replaced request")
    }
}
