@testable import ImageCodec
import XCTest

/// `BoxPrefilter`'s block averages (column sums and one pass per block of rows, in C) against the row-by-row block
/// sums they replaced (`ResizeReference.blockAverages`): equal for every geometry, including the narrower last
/// block of a row or column and blocks taller than a 16-bit column sum holds.
final class ProcessingBoxPrefilterTests: XCTestCase {
    /// Deterministic premultiplied noise (an LCG), or every byte `fill` when given.
    private func pixels(width: Int, height: Int, seed: UInt64, fill: UInt8? = nil) -> [UInt8] {
        var state = seed
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 0, to: out.count, by: 4) {
            if let fill { for c in 0..<4 { out[i + c] = fill }; continue }
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let a = UInt8(truncatingIfNeeded: state >> 56)
            for c in 0..<3 { out[i + c] = UInt8(Int(UInt8(truncatingIfNeeded: state >> (8 * UInt64(c) + 16))) % (Int(a) + 1)) }
            out[i + 3] = a
        }
        return out
    }

    /// Feeds `source` row by row and collects the averaged rows.
    private func averages(_ source: [UInt8], width: Int, height: Int, factorX: Int, factorY: Int) throws -> [UInt8] {
        let box = try BoxPrefilter(sourceWidth: width, sourceHeight: height, factorX: factorX, factorY: factorY)
        var out: [UInt8] = []
        source.withUnsafeBufferPointer { buffer in
            for y in 0..<height {
                guard let row = box.add(row: buffer.baseAddress! + y * width * 4) else { continue }
                out.append(contentsOf: UnsafeBufferPointer(start: row, count: box.width * 4))
            }
        }
        XCTAssertEqual(out.count, box.width * box.height * 4, "\(width)×\(height) / \(factorX)×\(factorY): rows produced")
        return out
    }

    func testBlockAveragesEqualTheRowByRowBlockSumsForEveryGeometry() throws {
        var seed: UInt64 = 1
        // Factor 2 (its own two-blocks-a-step loop), 1 on one axis, odd factors, whole and partial last blocks.
        for (width, height) in [(1, 1), (2, 2), (3, 5), (7, 4), (9, 9), (31, 17), (64, 48), (101, 37), (250, 3)] {
            for factorX in [1, 2, 3, 4, 5, 8, 13] where factorX <= max(width, 2) {
                for factorY in [1, 2, 3, 5, 7] where factorY <= max(height, 2) && factorX * factorY > 1 {
                    seed += 1
                    let source = pixels(width: width, height: height, seed: seed)
                    let expected = ResizeReference.blockAverages(source, width: width, height: height, factorX: factorX, factorY: factorY)
                    XCTAssertEqual(try averages(source, width: width, height: height, factorX: factorX, factorY: factorY), expected,
                                   "\(width)×\(height) / \(factorX)×\(factorY)")
                }
            }
        }
    }

    /// 257 rows of 255 fill a 16-bit column sum exactly; taller blocks carry on in 32-bit sums. White keeps every
    /// sum at its largest, noise checks the carrying.
    func testBlocksTallerThanASixteenBitColumnSumStayExact() throws {
        for factorY in [256, 257, 258, 259, 514, 600] {
            for (width, factorX) in [(5, 1), (9, 2), (11, 3)] {
                let height = factorY + factorY / 2 + 1 // one whole block of rows and a shorter last one
                for fill in [UInt8(255), nil] {
                    let source = pixels(width: width, height: height, seed: UInt64(factorY), fill: fill)
                    let expected = ResizeReference.blockAverages(source, width: width, height: height, factorX: factorX, factorY: factorY)
                    XCTAssertEqual(try averages(source, width: width, height: height, factorX: factorX, factorY: factorY), expected,
                                   "\(width)×\(height) / \(factorX)×\(factorY) fill \(fill.map(String.init) ?? "noise")")
                }
            }
        }
    }
}
