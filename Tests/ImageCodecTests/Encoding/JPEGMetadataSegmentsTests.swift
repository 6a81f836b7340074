@testable import ImageCodec
import Foundation
import TestSupport
import XCTest

/// `JPEGMetadataSegments.carriesMetadata`: every segment of the file decides, between scans too, and anything after
/// the end of the image; anything that does not read as a whole JPEG counts as carrying metadata (the caller then
/// does not copy the file's segments). Review 27's second pass proved the first version wrong on late segments,
/// trailers and JFIF/JFXX thumbnails, each copied by `cjxl --lossless_jpeg=1` and given back by `djxl`.
final class JPEGMetadataSegmentsTests: XCTestCase {
    /// A scan: its header and entropy-coded data holding a stuffed zero and a restart marker.
    private let scan: [UInt8] = [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56]
    private let jfif: [UInt8] = [0xFF, 0xE0, 0, 16] + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0]

    private func jpeg(_ segments: [[UInt8]], after: [[UInt8]] = [], trailer: [UInt8] = []) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8]
        for s in segments { bytes += s }
        bytes += scan
        // Segments between scans (a progressive JPEG's), then a second scan.
        if !after.isEmpty { for s in after { bytes += s }; bytes += scan }
        bytes += [0xFF, 0xD9] + trailer
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
        let full = jpeg([jfif])
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(full))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data()))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data("not a jpeg at all".utf8)))
        // Every prefix: the end of the image never reached.
        for cut in 0..<full.count { XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(full.prefix(cut)), "prefix \(cut)") }
        // A length under 2, a length past the end, a stray byte where a marker should be, an EOI before any scan.
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x01, 0xFF, 0xDA])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0xFF, 0xDB, 0x7F, 0xFF, 0xFF, 0xDA])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0x12, 0xFF, 0xDA, 0, 2])))
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(Data([0xFF, 0xD8, 0xFF, 0xD9, 0xFF, 0xDA, 0, 2])))
        // A slice of a larger Data (indices not from zero) reads the same.
        let padded = Data([9, 9, 9]) + full
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(padded.dropFirst(3)))
    }

    /// Review 27, second pass: what `cjxl --lossless_jpeg=1` copied past a check that stopped at the first scan.
    func testLateSegmentsTrailersAndThumbnailsCount() {
        let tables = segment(0xC4, [0x00] + [UInt8](repeating: 0, count: 16))
        XCTAssertFalse(JPEGMetadataSegments.carriesMetadata(jpeg([jfif], after: [tables])), "a DHT between scans is plain")
        for (name, late) in [("ICC", segment(0xE2, Array("ICC_PROFILE\0".utf8) + [1, 1, 9])),
                             ("EXIF", segment(0xE1, Array("Exif\0\0".utf8) + [0x4D, 0x4D])), ("COM", segment(0xFE, [65]))] {
            XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([jfif], after: [late])), "\(name) between scans")
        }
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([jfif], trailer: Array("TRAILING-SECRET".utf8))), "bytes after EOI")
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([jfif], trailer: [0])), "one byte after EOI")
        // A JFIF header with a 1 × 1 thumbnail, a JFXX extension, an Adobe segment with more than its 12 bytes.
        let thumbnail = [0xFF, 0xE0, 0, 19] + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 1, 1, 9, 9, 9] as [UInt8]
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([thumbnail])), "JFIF thumbnail")
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([jfif, segment(0xE0, Array("JFXX\0".utf8) + [0x13, 9])])), "JFXX")
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([segment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 1, 42])])),
                      "Adobe with extra bytes")
        XCTAssertTrue(JPEGMetadataSegments.carriesMetadata(jpeg([segment(0xE0, [1, 2, 3])])), "an APP0 that is not JFIF")
    }
}
