import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// Feeding helpers for the incremental stream tests: chunked feeding with a look at every partial image, and
/// the one-shot comparison.
enum IncrementalFeeding {
    /// Feeds `data` in chunks of `sizes()` bytes, calling `inspect` with each new partial image (and the
    /// decoder), then marks the data final. Returns the decoder.
    static func feed(_ data: Data, options: DecodeOptions = DecodeOptions(), sizes: () -> Int,
                     inspect: (Image, IncrementalDecoder) throws -> Void = { _, _ in }) throws -> IncrementalDecoder {
        let decoder = IncrementalDecoder(options: options)
        var offset = 0
        var last: Image?
        while offset < data.count {
            let end = min(data.count, offset + max(1, sizes()))
            try decoder.update(data.subdata(in: offset..<end), isFinal: false)
            offset = end
            if let image = try decoder.makeImage(), image !== last {
                XCTAssertTrue(image.isPartial)
                try inspect(image, decoder)
                last = image
            }
        }
        try decoder.update(Data(), isFinal: true)
        return decoder
    }

    /// Asserts the final image equals the one-shot decode of the same bytes (or both throw the same error).
    /// Returns whether the one-shot decode succeeded.
    @discardableResult
    static func assertMatchesOneShot(_ decoder: IncrementalDecoder, _ data: Data, options: DecodeOptions = DecodeOptions(),
                                     _ label: String, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let oneShot = Result { try ImageDecoder.decode(data, options: options) }
        let incremental = Result { try decoder.makeImage() }
        switch (oneShot, incremental) {
        case let (.success(a), .success(b?)):
            XCTAssertEqual(a.firstFrame.buffer, b.firstFrame.buffer, label, file: file, line: line)
            XCTAssertEqual(a.frameCount, b.frameCount, label, file: file, line: line)
            XCTAssertEqual(a.isPartial, b.isPartial, label, file: file, line: line)
            XCTAssertEqual(a.hasAlpha, b.hasAlpha, label, file: file, line: line)
            XCTAssertEqual(a.isProgressive, b.isProgressive, label, file: file, line: line)
            XCTAssertEqual(a.orientation, b.orientation, label, file: file, line: line)
            return true
        case let (.failure(a), .failure(b)):
            XCTAssertEqual("\(a)", "\(b)", label, file: file, line: line)
        default:
            XCTFail("\(label): one-shot \(oneShot) vs incremental \(incremental)", file: file, line: line)
        }
        return false
    }

    /// The rows of `buffer` whose first pixel is opaque, from the top, until the first that is not.
    static func opaqueRowPrefix(_ buffer: PixelBuffer) -> Int {
        var rows = 0
        while rows < buffer.height, buffer.pixel(x: 0, y: rows).a == 255 { rows += 1 }
        return rows
    }

    /// How many rows at the bottom of `buffer` are entirely transparent black (all bytes zero).
    static func transparentRowSuffix(_ buffer: PixelBuffer) -> Int {
        buffer.withUnsafeBytes { bytes in
            var rows = 0
            while rows < buffer.height {
                let start = (buffer.height - 1 - rows) * buffer.bytesPerRow
                guard bytes[start ..< start + buffer.width * 4].allSatisfy({ $0 == 0 }) else { break }
                rows += 1
            }
            return rows
        }
    }

    /// Whether rows `0..<count` of `a` and `b` hold the same bytes.
    static func rowsEqual(_ a: PixelBuffer, _ b: PixelBuffer, count: Int) -> Bool {
        guard a.width == b.width, a.height == b.height, count <= a.height else { return false }
        for y in 0..<count {
            for x in 0..<a.width where a.pixel(x: x, y: y) != b.pixel(x: x, y: y) { return false }
        }
        return true
    }
}
