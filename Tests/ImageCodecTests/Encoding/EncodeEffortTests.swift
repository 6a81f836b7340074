import Foundation
import ImageCodec
import TestSupport
import XCTest

/// `EncodeOptions.jpegQuantization` and `EncodeOptions.effort`: the tables JPEG output really carries, progressive
/// output at `.smallest`, and libwebp's method and sharp YUV per effort, on real encodes.
final class EncodeEffortTests: XCTestCase {
    /// Robidoux's table (natural order), the JPEG standard's Annex K luma and chroma tables.
    private static let robidoux = JPEGTables.robidoux
    private static let annexKLuma = JPEGTables.annexKLuma
    private static let annexKChroma = JPEGTables.annexKChroma
    private static func scaled(_ table: [Int], quality q: Int) -> [Int] { JPEGTables.scaled(table, quality: q) }
    private static func quantizationTables(_ data: Data) -> [Int: [Int]] { JPEGTables.quantizationTables(data) }

    private func encode(_ buffer: PixelBuffer, _ format: ImageFormat, _ options: EncodeOptions) throws -> Data {
        var encoder = ImageEncoder(format: format, options: options)
        encoder.addFrame(buffer)
        return try encoder.encode()
    }

    func testJPEGCarriesTheChosenTablesScaledByQuality() throws {
        let photo = try DownsampleFixtures.photo(width: 96, height: 64)
        for q in [20, 50, 80, 95] {
            let quality = Double(q) / 100
            let robidoux420 = Self.quantizationTables(try encode(photo, .jpeg, EncodeOptions(quality: quality)))
            XCTAssertEqual(robidoux420[0], Self.scaled(Self.robidoux, quality: q), "q\(q) luma, default tables")
            XCTAssertEqual(robidoux420[1], Self.scaled(Self.robidoux, quality: q), "q\(q) chroma at 4:2:0")
            let robidoux444 = Self.quantizationTables(try encode(photo, .jpeg, EncodeOptions(quality: quality,
                                                                                              chromaSubsampling: .yuv444)))
            XCTAssertEqual(robidoux444[0], Self.scaled(Self.robidoux, quality: q), "q\(q) luma at 4:4:4")
            XCTAssertEqual(robidoux444[1], Self.scaled(Self.annexKChroma, quality: q), "q\(q) chroma at 4:4:4")
            let annexK = Self.quantizationTables(try encode(photo, .jpeg, EncodeOptions(quality: quality,
                                                                                         jpegQuantization: .annexK)))
            XCTAssertEqual(annexK[0], Self.scaled(Self.annexKLuma, quality: q), "q\(q) Annex K luma")
            XCTAssertEqual(annexK[1], Self.scaled(Self.annexKChroma, quality: q), "q\(q) Annex K chroma")
        }
    }

    /// `.smallest` writes progressive JPEG (SOF2) of the same coefficients: the same pixels, fewer bytes.
    func testSmallestJPEGIsProgressiveWithTheSamePixels() throws {
        let photo: PixelBuffer
        if let corpus = Corpus.directory {
            let data = try Data(contentsOf: corpus.appendingPathComponent("photos/kodak_05.png"))
            photo = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: 400)).firstFrame.buffer
        } else {
            photo = try DownsampleFixtures.photo(width: 400, height: 300)
        }
        let balanced = try encode(photo, .jpeg, EncodeOptions(quality: 0.8))
        let smallest = try encode(photo, .jpeg, EncodeOptions(quality: 0.8, effort: .smallest))
        XCTAssertTrue(smallest.range(of: Data([0xFF, 0xC2])) != nil, "progressive SOF2")
        XCTAssertTrue(balanced.range(of: Data([0xFF, 0xC0])) != nil, "baseline SOF0")
        XCTAssertLessThan(smallest.count, balanced.count)
        XCTAssertEqual(try ImageDecoder.decode(smallest).firstFrame.buffer.packedBytes,
                       try ImageDecoder.decode(balanced).firstFrame.buffer.packedBytes)
    }

    /// libwebp's method follows the effort for lossy output (different bytes, each decodable and close to the
    /// source); lossless output ignores it.
    func testWebPEffortChangesLossyEncodingOnly() throws {
        let photo = try DownsampleFixtures.photo(width: 200, height: 150)
        var sizes: [EncodeEffort: Data] = [:]
        for effort in EncodeEffort.allCases {
            let data = try encode(photo, .webp, EncodeOptions(quality: 0.8, effort: effort))
            let decoded = try ImageDecoder.decode(data).firstFrame.buffer
            XCTAssertGreaterThan(ReferenceDecoder.psnr(decoded.converted(to: .rgba8).packedBytes,
                                                       photo.converted(to: .rgba8).packedBytes), 30, "\(effort)")
            sizes[effort] = data
        }
        XCTAssertNotEqual(sizes[.fast], sizes[.balanced])
        XCTAssertNotEqual(sizes[.smallest], sizes[.balanced])
        let losslessFast = try encode(photo, .webp, EncodeOptions(isLossless: true, effort: .fast))
        let losslessSmallest = try encode(photo, .webp, EncodeOptions(isLossless: true, effort: .smallest))
        XCTAssertEqual(losslessFast, losslessSmallest)
    }
}
