import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// `loadImage(url:…)`: one `Result` per request, errors included, with what was asked for.
final class ImageManagerResultTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil }

    private func load(_ url: URL, thumbnail: Int? = nil, options: ImageOptions = [],
                      cancel: Bool = false) -> [Result<ImageResponse, WebImageError>] {
        let results = Mutex<[Result<ImageResponse, WebImageError>]>([])
        let done = DispatchSemaphore(value: 0)
        let operation = fixture.manager.loadImage(url: url, options: options, thumbnailPixelSize: thumbnail) { result in
            results.withLock { $0.append(result) }
            done.signal()
        }
        if cancel { operation.cancel() }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        return results.withLock { $0 }
    }

    func testSuccessCarriesTheImageSourceAndRequest() throws {
        let url = fixture.serve("/a.png", try TestImages.png(width: 64, height: 48))
        let first = load(url, thumbnail: 32)
        XCTAssertEqual(first.count, 1)
        let response = try first[0].get()
        XCTAssertEqual(response.source, .remote)
        XCTAssertEqual(response.url, url)
        XCTAssertEqual(response.request.thumbnailPixelSize, 32)
        XCTAssertLessThanOrEqual(max(response.image.width, response.image.height), 32)
        XCTAssertEqual(try load(url, thumbnail: 32)[0].get().source, .memoryCache)
    }

    func testFailuresAreResultsNotSilence() throws {
        fixture.server.route("/missing.png", .status(404))
        guard case .failure(.fetchFailed(let fetch)) = load(fixture.server.url("/missing.png"))[0] else {
            return XCTFail("a 404 is a failure")
        }
        XCTAssertEqual(fetch.httpStatusCode, 404)
        fixture.server.route("/text", .bytes(Data("not an image".utf8), contentType: "text/plain"))
        guard case .failure(.decodeFailed) = load(fixture.server.url("/text"))[0] else { return XCTFail("not an image") }
    }

    func testACancelIsAFailureOnce() throws {
        fixture.server.route("/slow.png", .bytes(try TestImages.png()).delayed(by: 5))
        let results = load(fixture.server.url("/slow.png"), cancel: true)
        XCTAssertEqual(results.count, 1)
        guard case .failure(.cancelled(let url)) = results[0] else { return XCTFail("cancelled: \(results)") }
        XCTAssertEqual(url.path, "/slow.png")
    }

    /// The completion may use the same manager at once (a memory hit completes on the caller's thread).
    func testTheCompletionMayLoadAgainFromInside() throws {
        let url = fixture.serve("/again.png", try TestImages.png())
        XCTAssertNotNil(try? load(url)[0].get())
        let inner = DispatchSemaphore(value: 0)
        let manager = fixture.manager
        manager.loadImage(url: url) { outer in
            XCTAssertEqual(try? outer.get().source, .memoryCache)
            manager.loadImage(url: url) { again in
                XCTAssertEqual(try? again.get().source, .memoryCache)
                inner.signal()
            }
        }
        XCTAssertEqual(inner.wait(timeout: .now() + 10), .success)
    }
}

/// The async API has the callback API's options: a transform and progress.
final class AsyncImageOptionsTests: XCTestCase {
    func testTransformAndProgressReachTheAsyncAPI() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let url = fixture.serve("/async.png", try TestImages.png(width: 64, height: 48))
        let received = Mutex<Int64>(0)
        let onePixel = Image(buffer: try PixelBuffer(width: 1, height: 1))
        let flip = ImageTransform(id: "one-pixel") { _, _ in onePixel }
        let image = try await fixture.manager.image(for: url, transform: flip) { bytes, _ in
            received.withLock { $0 = max($0, bytes) }
        }
        XCTAssertEqual(image.width, 1, "the transform ran")
        XCTAssertGreaterThan(received.withLock { $0 }, 0, "progress was reported")
    }
}

/// `data:` URLs through the manager (feeds scraped from HTML are full of them): decoded within the same byte
/// limits as a download, cached in memory like any URL (a long one is delivered but not kept on disk: its key
/// passes the disk cache's key cap).
final class DataURLManagerTests: XCTestCase {
    func testADataURLLoadsAndRespectsTheByteLimit() throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let png = try TestImages.png(width: 20, height: 10)
        let url = try XCTUnwrap(URL(string: "data:image/png;base64,\(png.base64EncodedString())"))
        let first = fixture.load(url)
        XCTAssertEqual(first.image?.width, 20, "\(String(describing: first.error))")
        XCTAssertEqual(fixture.load(url).source, .memoryCache)
        fixture.manager.maximumResponseSize = Int64(png.count - 1)
        let tooLarge = fixture.load(try XCTUnwrap(URL(string: "data:image/png;base64,\(png.base64EncodedString())#other")))
        guard case .fetchFailed(.responseTooLarge)? = tooLarge.error else {
            return XCTFail("one byte over the limit: \(String(describing: tooLarge.error))")
        }
    }
}
