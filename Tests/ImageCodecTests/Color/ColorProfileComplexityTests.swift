import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// Transform creation is bounded in time: profiles whose lookup tables would make Little CMS work too long (a
/// 10,000-element `D2B` chain took 13.8 s to build) are refused before lcms parses them, at the limits exactly.
final class ColorProfileComplexityTests: XCTestCase {
    // MARK: Profiles written here, byte by byte

    private static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    private static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    private static func float(_ v: Float) -> [UInt8] { be32(v.bitPattern) }
    private static func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// An RGB input profile (`pcs` 'XYZ ' or 'Lab ') with `tags` (signature, bytes) and a D50 white point.
    static func profile(version: UInt8, pcs: String, tags: [(String, [UInt8])]) -> Data {
        let d50 = be32(0x0000_F6D6) + be32(0x0001_0000) + be32(0x0000_D32D)
        let all = tags + [("wtpt", ascii("XYZ ") + [0, 0, 0, 0] + d50)]
        var header = [UInt8](repeating: 0, count: 128)
        header.replaceSubrange(8..<12, with: [version, 0x10, 0, 0])
        header.replaceSubrange(12..<16, with: ascii("scnr"))
        header.replaceSubrange(16..<20, with: ascii("RGB "))
        header.replaceSubrange(20..<24, with: ascii(pcs))
        header.replaceSubrange(36..<40, with: ascii("acsp"))
        header.replaceSubrange(68..<80, with: d50)
        var table = be32(UInt32(all.count))
        var body: [UInt8] = []
        var offset = 128 + 4 + 12 * all.count
        for (signature, bytes) in all {
            table += ascii(signature) + be32(UInt32(offset)) + be32(UInt32(bytes.count))
            var padded = bytes
            while padded.count % 4 != 0 { padded.append(0) }
            body += padded
            offset += padded.count
        }
        var result = header + table + body
        result.replaceSubrange(0..<4, with: be32(UInt32(result.count)))
        return Data(result)
    }

    /// A `D2B0` = `D2B1` chain of `count` 3×3 matrices (each close to identity).
    static func matrixChain(_ count: Int) -> Data {
        var element = ascii("matf") + [0, 0, 0, 0] + be16(3) + be16(3)
        for i in 0..<3 { for j in 0..<3 { element += float(i == j ? 0.9 : 0.05) } }
        element += float(0) + float(0) + float(0)
        var tag = ascii("mpet") + [0, 0, 0, 0] + be16(3) + be16(3) + be32(UInt32(count))
        let first = 16 + count * 8
        for k in 0..<count { tag += be32(UInt32(first + k * element.count)) + be32(UInt32(element.count)) }
        for _ in 0..<count { tag += element }
        return profile(version: 4, pcs: "XYZ ", tags: [("D2B0", tag), ("D2B1", tag)])
    }

    /// An `A2B0` lut16 (`mft2`) RGB → Lab with a `grid`³ table.
    static func lut16(grid: Int) -> Data {
        var tag = ascii("mft2") + [0, 0, 0, 0] + [3, 3, UInt8(grid), 0]
        for i in 0..<3 { for j in 0..<3 { tag += be32(i == j ? 0x0001_0000 : 0) } }
        tag += be16(2) + be16(2)
        for _ in 0..<3 { tag += be16(0) + be16(0xFFFF) }
        var clut = [UInt8](repeating: 0, count: grid * grid * grid * 6)
        for k in stride(from: 0, to: clut.count, by: 6) { clut[k] = 0x80 }  // L* 50, a* b* 0: mid grey
        tag += clut
        for _ in 0..<3 { tag += be16(0) + be16(0xFFFF) }
        return profile(version: 2, pcs: "Lab ", tags: [("A2B0", tag)])
    }

    private func plan(_ icc: Data) -> ColorPlan {
        ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: icc), layout: .rgba, management: .sRGB, cache: ColorTransformCache())
    }

    // MARK: Tests

    func testProcessingElementChainsAreBoundedAtTheLimit() throws {
        let limit = ProfileComplexity.maxElements
        XCTAssertNil(ProfileComplexity.excess(Self.matrixChain(limit)))
        XCTAssertNotNil(plan(Self.matrixChain(limit)).transform, "\(limit) elements: lcms builds the transform")
        XCTAssertNotNil(ProfileComplexity.excess(Self.matrixChain(limit + 1)))
        let before = ColorLog.snapshot.count
        XCTAssertNil(plan(Self.matrixChain(limit + 1)).transform, "\(limit + 1) elements: ignored")
        XCTAssertTrue(ColorLog.snapshot.recent.suffix(max(1, ColorLog.snapshot.count - before))
            .contains { $0.contains("too complex") }, "\(ColorLog.snapshot.recent)")
    }

    func testLookupTableGridsAreBoundedAtTheLimit() throws {
        // 80³ = 512,000 ≤ 2^19 < 81³ = 531,441.
        XCTAssertLessThanOrEqual(80 * 80 * 80, ProfileComplexity.maxGridPoints)
        XCTAssertGreaterThan(81 * 81 * 81, ProfileComplexity.maxGridPoints)
        XCTAssertNil(ProfileComplexity.excess(Self.lut16(grid: 80)))
        XCTAssertNotNil(plan(Self.lut16(grid: 80)).transform, "an 80³ table: lcms builds the transform")
        XCTAssertNotNil(ProfileComplexity.excess(Self.lut16(grid: 81)))
        XCTAssertNil(plan(Self.lut16(grid: 81)).transform, "an 81³ table: ignored")
    }

    /// The pathological profile (13.8 s of lcms transform creation unbounded) in a JPEG: decoded as untagged.
    func testPathologicalProfileDecodesAsUntagged() throws {
        let chain = Self.matrixChain(10_000)
        XCTAssertLessThan(chain.count, LittleCMS.maxProfileBytes, "under the byte cap: only the complexity check stops it")
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        encoder.addFrame(try ColorTestSupport.chart())
        let untagged = try encoder.encode()
        let tagged = ICCEmbedding.embed(chain, in: untagged, format: .jpeg, width: 64, height: 64)
        let image = try ColorTestSupport.decode(tagged)
        XCTAssertEqual(image.colorSpace?.iccProfile, chain, "the profile is still reported")
        XCTAssertEqual(image.firstFrame.buffer, try ColorTestSupport.decode(untagged).firstFrame.buffer)
    }

    /// Hostile tag tables (offsets past the end, counts that do not fit) are left to lcms, never read out of bounds.
    func testMalformedTagTablesAreNotReadOutOfBounds() throws {
        var bytes = [UInt8](Self.matrixChain(3))
        bytes.replaceSubrange(128..<132, with: Self.be32(0xFFFF_FFFF))
        XCTAssertNil(ProfileComplexity.excess(Data(bytes)))
        var chain = [UInt8](Self.matrixChain(3))
        let tagOffset = Int(chain[136]) << 24 | Int(chain[137]) << 16 | Int(chain[138]) << 8 | Int(chain[139])
        chain.replaceSubrange(tagOffset + 12..<tagOffset + 16, with: Self.be32(5))  // 5 elements, 3 positions
        chain.replaceSubrange(tagOffset + 16..<tagOffset + 20, with: Self.be32(0x7FFF_FFF0))
        _ = ProfileComplexity.excess(Data(chain))
        for cut in stride(from: 0, to: chain.count, by: 7) { _ = ProfileComplexity.excess(Data(chain.prefix(cut))) }
    }
}
