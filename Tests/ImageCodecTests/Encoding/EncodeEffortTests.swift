import Foundation
import ImageCodec
import TestSupport
import XCTest

/// `EncodeOptions.jpegQuantization` and `EncodeOptions.effort`: the tables JPEG output really carries, progressive
/// output at `.smallest`, and libwebp's method and sharp YUV per effort, on real encodes.
final class EncodeEffortTests: XCTestCase {
    /// Robidoux's table (natural order), the JPEG standard's Annex K luma and chroma tables.
    private static let robidoux = [16, 16, 16, 18, 25, 37, 56, 85, 16, 17, 20, 27, 34, 40, 53, 75,
                                   16, 20, 24, 31, 43, 62, 91, 135, 18, 27, 31, 40, 53, 74, 106, 156,
                                   25, 34, 43, 53, 69, 94, 131, 189, 37, 40, 62, 74, 94, 124, 169, 238,
                                   56, 53, 91, 106, 131, 169, 226, 311, 85, 75, 135, 156, 189, 238, 311, 418]
    private static let annexKLuma = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
                                     14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
                                     18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
                                     49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
    private static let annexKChroma = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
                                       24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99]
        + [Int](repeating: 99, count: 32)
    /// The zigzag order DQT stores coefficients in: entry k of the segment is natural index `zigzag[k]`.
    private static let zigzag = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,
                                 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37,
                                 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63]

    /// libjpeg's scaling of a base table for IJG quality `q` (baseline: 1…255).
    private static func scaled(_ table: [Int], quality q: Int) -> [Int] {
        let scale = q < 50 ? 5000 / q : 200 - q * 2
        return table.map { min(255, max(1, ($0 * scale + 50) / 100)) }
    }

    /// The 8-bit quantisation tables of a JPEG's DQT segments, by table id, in natural order.
    private static func quantizationTables(_ data: Data) -> [Int: [Int]] {
        let bytes = [UInt8](data)
        var tables: [Int: [Int]] = [:]
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if marker == 0xDA { break }
            if marker == 0xDB {
                var j = i + 4
                while j < i + 2 + length {
                    let (precision, id) = (bytes[j] >> 4, Int(bytes[j] & 15))
                    XCTAssertEqual(precision, 0, "baseline tables are 8-bit")
                    var natural = [Int](repeating: 0, count: 64)
                    for k in 0..<64 { natural[zigzag[k]] = Int(bytes[j + 1 + k]) }
                    tables[id] = natural
                    j += 65
                }
            }
            i += 2 + length
        }
        return tables
    }

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
