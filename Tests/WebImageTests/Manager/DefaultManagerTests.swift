import Foundation
import ImageCodec
import TestSupport
import WebImage
import XCTest

/// `ImageManager.shared` can be replaced once by the application, and every API that defaults to it follows.
final class DefaultManagerTests: XCTestCase {
    func testASetDefaultIsWhatTargetsAndPrefetchersUse() throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let previous = ImageManager.shared
        ImageManager.shared = fixture.manager
        defer { ImageManager.shared = previous }
        XCTAssertTrue(ImageManager.shared === fixture.manager)

        let url = fixture.serve("/cell.png", try TestImages.png())
        let cell = RecordingTarget()
        let done = DispatchSemaphore(value: 0)
        cell.setImage(with: url, progress: nil, transform: nil) { _, _, _, stage, _ in if stage != .progress { done.signal() } }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(fixture.server.requestCount(for: "/cell.png"), 1, "loaded through the manager set as default")
        XCTAssertTrue(try fixture.manager.cache?.containsImage(forKey: url.absoluteString, type: .memory) ?? false)

        let prefetched = fixture.serve("/next.png", try TestImages.png(seed: 3))
        let prefetcher = ImagePrefetcher()
        let finished = DispatchSemaphore(value: 0)
        prefetcher.onFinish = { _ in finished.signal() }
        prefetcher.startPrefetching(with: [prefetched])
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(fixture.server.requestCount(for: "/next.png"), 1)
    }

    /// Set and read from many threads at once: every read sees one of the managers set, never a torn value.
    func testSettingFromManyThreadsIsSafe() throws {
        let previous = ImageManager.shared
        defer { ImageManager.shared = previous }
        let managers = (0..<4).map { _ in ImageManager(cache: nil) }
        DispatchQueue.concurrentPerform(iterations: 2_000) { index in
            if index % 3 == 0 { ImageManager.shared = managers[index % managers.count] }
            let current = ImageManager.shared
            XCTAssertTrue(managers.contains { $0 === current } || current === previous)
        }
    }
}
