import Foundation
import Synchronization
import ImageCodec
import TestSupport
import WebImage
import XCTest

/// `display(_:for:)`: a target learns which request each image (and placeholder) belongs to.
final class ImageTargetRequestTests: XCTestCase {
    final class Cell: ImageTarget, @unchecked Sendable { // `shown` is only touched on displayQueue
        let imageSetter = ImageSetter()
        let displayQueue = DispatchQueue(label: "cell")
        private(set) var shown: [(width: Int?, request: ImageRequest?)] = []
        func display(_ image: Image?) { XCTFail("display(_:for:) is the one called") }
        func display(_ image: Image?, for request: ImageRequest?) {
            dispatchPrecondition(condition: .onQueue(displayQueue))
            shown.append((image?.width, request))
        }
    }

    func testEachImageComesWithItsRequest() throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let url = fixture.serve("/a.png", try TestImages.png(width: 64, height: 48))
        let cell = Cell()
        let placeholder = Image(buffer: try PixelBuffer(width: 2, height: 2))
        let done = DispatchSemaphore(value: 0)
        cell.setImage(with: url, placeholder: placeholder, thumbnailPixelSize: 16, manager: fixture.manager,
                      progress: nil, transform: nil) { _, _, _, stage, _ in if stage != .progress { done.signal() } }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        cell.setImage(with: nil, manager: fixture.manager)
        cell.displayQueue.sync {}
        let shown = cell.displayQueue.sync { cell.shown }
        XCTAssertEqual(shown.map(\.width), [2, 16, nil], "placeholder, thumbnail, cleared")
        XCTAssertEqual(shown[0].request?.url, url, "the placeholder belongs to the request")
        XCTAssertEqual(shown[1].request?.thumbnailPixelSize, 16)
        XCTAssertNil(shown[2].request)
    }
}
