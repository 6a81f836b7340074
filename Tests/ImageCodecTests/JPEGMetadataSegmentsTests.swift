@testable import ImageCodec
import Foundation
import TestSupport
import XCTest

/// `JPEGMetadataSegments.carriesMetadata`: the segments before the first scan decide; anything that does not read as
/// a JPEG up to its first scan counts as carrying metadata (the caller then does not copy the file's segments).
final class JPEGMetadataSegmentsTests: XCTestCase {
    private func jpeg(_ segments: [[UInt8]]) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8]
        for s in segments { bytes += s }
        bytes += [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0, 0x12, 0x34, 0xFF, 0xD9]
        return Data(bytes)
    }
    private func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    }

    func testOurEncoderWritesAPlainFile() throws {
        let buffer = try PixelBuffer(width: 16, height: 8, pixelFormat: .rgba8)
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(try Image(buffer: buffer).encoded(as: .jpeg)))
    }

    func testEachKindOfSegment() {
        let jfif = segment(0xE0, Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])
        let adobe = segment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 1])
        let tables = segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(jpeg([jfif, adobe, tables])))
        // Fill bytes before a marker are allowed.
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(jpeg([[0xFF, 0xFF] + jfif])))
        for marker in [0xE1, 0xE2, 0xE3, 0xED, 0xEF, 0xFE] as [UInt8] {
            XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([jfif, segment(marker, [1, 2, 3]), tables])), "marker \(marker)")
        }
    }

    func testAnythingThatDoesNotReadAsAJPEGCountsAsCarryingMetadata() {
        let full = jpeg([segment(0xE0, [1, 2, 3])])
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data()))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data("not a jpeg at all".utf8)))
        // Every prefix cut before the scan's marker: no scan reached.
        for cut in 0..<(2 + 7 + 1) { XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(full.prefix(cut)), "prefix \(cut)") }
        // A length under 2, a length past the end, a stray byte where a marker should be, an EOI before any scan.
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x01, 0xFF, 0xDA])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0xFF, 0xDB, 0x7F, 0xFF, 0xFF, 0xDA])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0x12, 0xFF, 0xDA, 0, 2])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0xFF, 0xD9, 0xFF, 0xDA, 0, 2])))
        // A slice of a larger Data (indices not from zero) reads the same.
        let padded = Data([9, 9, 9]) + full
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(padded.dropFirst(3)))
    }
}
