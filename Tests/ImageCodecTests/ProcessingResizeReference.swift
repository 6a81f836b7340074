@testable import ImageCodec
import XCTest

/// The resize path as it was before the box prefilter's loops moved to C (a9c38f8's arithmetic), written plainly:
/// the reference the fast paths must match. Block averages summed row by row, block by block, divided through the
/// rounded 2^32 reciprocal; then the same weight tables applied in exact 64-bit integers (the order of the sums
/// does not change an exact integer), rounded, alpha clamped to 0…255 and colour to 0…alpha.
enum ResizeReference {
    /// `factorX × factorY` block averages of premultiplied RGBA `pixels` (`width × height`), the last block of a
    /// row or column narrower: the loop `BoxPrefilter.add(row:)` ran before.
    static func blockAverages(_ pixels: [UInt8], width: Int, height: Int, factorX: Int, factorY: Int) -> [UInt8] {
        let blocksWide = (width + factorX - 1) / factorX
        let blocksHigh = (height + factorY - 1) / factorY
        var out = [UInt8](repeating: 0, count: blocksWide * blocksHigh * 4)
        var sums = [UInt32](repeating: 0, count: blocksWide * 4)
        var rowsInBlock = 0
        var blockRow = 0
        for y in 0..<height {
            for block in 0..<blocksWide {
                let first = block * factorX
                for x in first..<min(first + factorX, width) {
                    for c in 0..<4 { sums[block * 4 + c] &+= UInt32(pixels[(y * width + x) * 4 + c]) }
                }
            }
            rowsInBlock += 1
            guard rowsInBlock == factorY || y == height - 1 else { continue }
            let fullCount = UInt64(factorX * rowsInBlock)
            let lastCount = UInt64((width - (blocksWide - 1) * factorX) * rowsInBlock)
            let fullReciprocal = ((1 << 32) + fullCount / 2) / fullCount
            let lastReciprocal = ((1 << 32) + lastCount / 2) / lastCount
            for block in 0..<blocksWide {
                let reciprocal = block == blocksWide - 1 ? lastReciprocal : fullReciprocal
                for c in 0..<4 {
                    let value = (UInt64(sums[block * 4 + c]) &* reciprocal &+ (1 << 31)) >> 32
                    out[(blockRow * blocksWide + block) * 4 + c] = UInt8(truncatingIfNeeded: value)
                }
            }
            sums = [UInt32](repeating: 0, count: blocksWide * 4)
            rowsInBlock = 0
            blockRow += 1
        }
        return out
    }

    /// `source` resized to `width × height` the reference way, in `source`'s pixel format.
    static func resized(_ source: PixelBuffer, width: Int, height: Int, filter: ResamplingFilter) throws -> PixelBuffer {
        let premultiplied = source.converted(to: .rgba8Premultiplied)
        let factorX = BoxPrefilter.factor(source: source.width, destination: width, filter: filter)
        let factorY = BoxPrefilter.factor(source: source.height, destination: height, filter: filter)
        let gridWidth = (source.width + factorX - 1) / factorX
        let gridHeight = (source.height + factorY - 1) / factorY
        let grid = factorX > 1 || factorY > 1
            ? blockAverages(premultiplied.packedBytes, width: source.width, height: source.height, factorX: factorX, factorY: factorY)
            : premultiplied.packedBytes
        // Fresh tables (not the cache): the same geometry gives the same weights.
        let horizontal = try ResampleWeights(sourceCount: source.width, destinationCount: width, filter: filter, blockFactor: factorX)
        let vertical = try ResampleWeights(sourceCount: source.height, destinationCount: height, filter: filter, blockFactor: factorY)
        // Horizontal pass in Int64, then the vertical one, then rounding by 2^40 and the clamps.
        var rows = [Int64](repeating: 0, count: gridHeight * width * 4)
        for y in 0..<gridHeight {
            for x in 0..<width {
                for k in 0..<horizontal.length[x] {
                    let w = Int64(horizontal.weights[x * horizontal.stride + k])
                    let p = (y * gridWidth + horizontal.start[x] + k) * 4
                    for c in 0..<4 { rows[(y * width + x) * 4 + c] += w * Int64(grid[p + c]) }
                }
            }
        }
        let shift = Int64(2 * ResampleWeights.fractionBits)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                var value = [Int64](repeating: 0, count: 4)
                for k in 0..<vertical.length[y] {
                    let w = Int64(vertical.weights[y * vertical.stride + k])
                    let p = ((vertical.start[y] + k) * width + x) * 4
                    for c in 0..<4 { value[c] += w * rows[p + c] }
                }
                let rounded = value.map { max(0, $0 + (1 << (shift - 1))) >> shift }
                let alpha = min(255, rounded[3])
                for c in 0..<3 { out[(y * width + x) * 4 + c] = UInt8(min(alpha, rounded[c])) }
                out[(y * width + x) * 4 + 3] = UInt8(alpha)
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8Premultiplied, bytes: out)
            .converted(to: source.pixelFormat)
    }

    /// Asserts that `actual` is within one level of `expected` everywhere (the contract of a faster path) and,
    /// today, equal: the box loops in C sum the same integers and round them the same way.
    static func assertMatches(_ actual: PixelBuffer, _ expected: PixelBuffer, _ message: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.width, expected.width, message, file: file, line: line)
        XCTAssertEqual(actual.height, expected.height, message, file: file, line: line)
        XCTAssertEqual(actual.pixelFormat, expected.pixelFormat, message, file: file, line: line)
        let (a, b) = (actual.packedBytes, expected.packedBytes)
        guard a.count == b.count else { return }
        var worst = 0
        var differing = 0
        for i in 0..<a.count where a[i] != b[i] {
            differing += 1
            worst = max(worst, abs(Int(a[i]) - Int(b[i])))
        }
        XCTAssertLessThanOrEqual(worst, 1, "\(message): largest difference", file: file, line: line)
        XCTAssertEqual(differing, 0, "\(message): bytes that differ (largest by \(worst))", file: file, line: line)
    }
}
