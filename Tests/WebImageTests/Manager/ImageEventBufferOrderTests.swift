import Foundation
import ImageCodec
@testable import WebImage
import XCTest

/// `ImageEventBuffer` alone: a newer partial image replaces one not yet read and moves after the progress
/// events that came in between; progress and the final event are kept; the end is delivered once.
final class ImageEventBufferOrderTests: XCTestCase {
    private func image(_ side: Int) throws -> Image {
        Image(buffer: try PixelBuffer(width: side, height: side))
    }

    private func describe(_ event: ImageEvent?) -> String {
        switch event {
        case .progress(let received, _)?: return "progress \(received)"
        case .partial(let image)?: return "partial \(image.width)"
        case .finished(let image, _)?: return "finished \(image.width)"
        case nil: return "end"
        }
    }

    func testANewerPartialReplacesTheWaitingOneAndKeepsTheOrder() async throws {
        let buffer = ImageEventBuffer()
        buffer.yield(.progress(received: 1, expected: 4))
        buffer.yield(.partial(try image(1)))
        buffer.yield(.progress(received: 2, expected: 4))
        buffer.yield(.partial(try image(2)))
        buffer.yield(.progress(received: 3, expected: 4))
        buffer.yield(.partial(try image(3)))
        buffer.yield(.progress(received: 4, expected: 4))
        buffer.yield(.finished(try image(4), .remote))
        buffer.finish()
        buffer.yield(.progress(received: 5, expected: 4))  // after the end: ignored
        var seen: [String] = []
        while let event = try await buffer.next() { seen.append(describe(event)) }
        XCTAssertEqual(seen, ["progress 1", "progress 2", "progress 3", "partial 3", "progress 4", "finished 4"])
        let again = try await buffer.next()
        XCTAssertNil(again, "the end is delivered again as nil")
    }

    func testAPartialReadBeforeTheNextOneIsNotReplaced() async throws {
        let buffer = ImageEventBuffer()
        buffer.yield(.partial(try image(1)))
        var event = try await buffer.next()
        XCTAssertEqual(describe(event), "partial 1")
        buffer.yield(.partial(try image(2)))
        buffer.yield(.progress(received: 1, expected: nil))
        buffer.finish(throwing: CancellationError())
        event = try await buffer.next()
        XCTAssertEqual(describe(event), "partial 2")
        event = try await buffer.next()
        XCTAssertEqual(describe(event), "progress 1")
        do {
            _ = try await buffer.next()
            XCTFail("the error ends the sequence")
        } catch is CancellationError {}
        event = try await buffer.next()
        XCTAssertNil(event, "the error is thrown once")
    }

    func testAWaitingConsumerGetsTheEventDirectly() async throws {
        let buffer = ImageEventBuffer()
        let reader = Task { try await buffer.next() }
        // Whether the reader waits already or not, it gets the first partial (nothing can replace it unread).
        buffer.yield(.partial(try image(7)))
        let event = try await reader.value
        XCTAssertEqual(describe(event), "partial 7")
    }
}
