import Foundation
import ImageCodec
import XCTest

final class ProcessingRowResamplerTests: XCTestCase {
    /// Deterministic pseudo-random premultiplied pixels (an LCG; no global random state).
    private func noise(width: Int, height: Int, seed: UInt64, format: PixelBuffer.PixelFormat = .rgba8Premultiplied) throws -> PixelBuffer {
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        return try Patterns.make(width: width, height: height, format: format) { _, _ in
            let a = next() | 0x20
            if format == .rgba8 { return RGBA(r: next(), g: next(), b: next(), a: a) }
            func upTo(_ v: UInt8) -> UInt8 { UInt8(Int(v) % (Int(a) + 1)) }
            return RGBA(r: upTo(next()), g: upTo(next()), b: upTo(next()), a: a)
        }
    }

    /// Feeds `buffer` to a resampler one row at a time from a fresh array per row.
    private func stream(_ buffer: PixelBuffer, width: Int, height: Int, filter: ResamplingFilter,
                        resultFormat: PixelBuffer.PixelFormat? = nil) throws -> PixelBuffer {
        let resampler = try RowResampler(sourceWidth: buffer.width, sourceHeight: buffer.height,
                                         destinationWidth: width, destinationHeight: height, filter: filter,
                                         sourceFormat: buffer.pixelFormat, resultFormat: resultFormat)
        let packed = buffer.packedBytes
        for y in 0..<buffer.height {
            let row = Array(packed[y * buffer.width * 4 ..< (y + 1) * buffer.width * 4])
            try row.withUnsafeBytes { try resampler.consume(row: $0) }
        }
        XCTAssertTrue(resampler.isComplete)
        return try resampler.finish()
    }

    // MARK: An independent reference: direct 2-D filtering in Double, written from the textbook formulas.

    private func kernel(_ filter: ResamplingFilter, _ x: Double) -> Double {
        let t = abs(x)
        switch filter {
        case .area, .triangle: return max(0, 1 - t)
        case .mitchell:
            let b = 1.0 / 3, c = 1.0 / 3
            if t < 1 { return ((12 - 9 * b - 6 * c) * pow(t, 3) + (-18 + 12 * b + 6 * c) * t * t + (6 - 2 * b)) / 6 }
            if t < 2 { return ((-b - 6 * c) * pow(t, 3) + (6 * b + 30 * c) * t * t + (-12 * b - 48 * c) * t + (8 * b + 24 * c)) / 6 }
            return 0
        case .lanczos3:
            if t == 0 { return 1 }
            if t >= 3 { return 0 }
            return 3 * sin(.pi * t) * sin(.pi * t / 3) / (.pi * t * .pi * t)
        }
    }

    /// Normalised weights of every source sample for destination sample `i`.
    private func axisWeights(_ filter: ResamplingFilter, source n: Int, destination m: Int, _ i: Int) -> [Double] {
        let scale = Double(n) / Double(m)
        var w = [Double](repeating: 0, count: n)
        for j in 0..<n {
            if filter == .area && scale >= 1 {
                w[j] = max(0, min(Double(i + 1) * scale, Double(j + 1)) - max(Double(i) * scale, Double(j)))
            } else {
                let fs = max(scale, 1)
                w[j] = kernel(filter, (Double(j) + 0.5 - (Double(i) + 0.5) * scale) / fs)
            }
        }
        let sum = w.reduce(0, +)
        return w.map { $0 / sum }
    }

    private func reference(_ source: PixelBuffer, width: Int, height: Int, filter: ResamplingFilter) throws -> PixelBuffer {
        let p = source.converted(to: .rgba8Premultiplied)
        let bytes = p.packedBytes
        var out = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            let wy = axisWeights(filter, source: p.height, destination: height, y)
            for x in 0..<width {
                let wx = axisWeights(filter, source: p.width, destination: width, x)
                var acc = [0.0, 0.0, 0.0, 0.0]
                for j in 0..<p.height where wy[j] != 0 {
                    for i in 0..<p.width where wx[i] != 0 {
                        for c in 0..<4 { acc[c] += wy[j] * wx[i] * Double(bytes[(j * p.width + i) * 4 + c]) }
                    }
                }
                let a = min(255, max(0, acc[3].rounded()))
                let v = acc.prefix(3).map { UInt8(min(a, max(0, $0.rounded()))) }
                out.setPixel(x: x, y: y, to: RGBA(r: v[0], g: v[1], b: v[2], a: UInt8(a)))
            }
        }
        return out
    }

    private func assertWithinOne(_ a: PixelBuffer, _ b: PixelBuffer, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.width, b.width, file: file, line: line)
        XCTAssertEqual(a.height, b.height, file: file, line: line)
        let (x, y) = (a.packedBytes, b.packedBytes)
        guard x.count == y.count else { return }
        let worst = zip(x, y).map { abs(Int($0) - Int($1)) }.max() ?? 0
        XCTAssertLessThanOrEqual(worst, 1, message, file: file, line: line)
    }

    // MARK: Tests

    func testStreamingMatchesResizedExactlyAndAnIndependentReferenceWithinOne() throws {
        let source = try noise(width: 31, height: 23, seed: 7)
        // Shrink factors under 4: the filter runs on the source itself.
        let sizes = [(10, 7), (15, 11), (8, 23), (31, 6), (45, 40), (9, 50), (100, 8)]
        for filter in ResamplingFilter.allCases {
            for (w, h) in sizes {
                let streamed = try stream(source, width: w, height: h, filter: filter)
                XCTAssertEqual(streamed, try source.resized(width: w, height: h, filter: filter), "\(filter) \(w)×\(h)")
                assertWithinOne(streamed, try reference(source, width: w, height: h, filter: filter), "\(filter) \(w)×\(h)")
            }
        }
    }

    /// Shrinking by 4 or more averages blocks first (libvips' shrink + reduce). On a smooth image that is
    /// indistinguishable from filtering the full source, and the geometry (including a narrower last block)
    /// stays exact; on white noise the mean is kept.
    func testLargeShrinksStayCloseToTheFullFilter() throws {
        let smooth = try Patterns.make(width: 203, height: 157) { x, y in
            let v = 127.5 + 100 * sin(Double(x) / 19) * cos(Double(y) / 23)
            return RGBA(r: UInt8(v), g: UInt8(255 - v), b: UInt8((x + y) * 255 / 360), a: 255)
        }
        let noisy = try noise(width: 203, height: 157, seed: 21)
        for filter in ResamplingFilter.allCases {
            for (w, h) in [(40, 30), (12, 9), (50, 157), (3, 2), (1, 1)] {
                let streamed = try stream(smooth, width: w, height: h, filter: filter)
                XCTAssertEqual(streamed, try smooth.resized(width: w, height: h, filter: filter))
                let expected = try reference(smooth, width: w, height: h, filter: filter)
                let worst = zip(streamed.packedBytes, expected.packedBytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
                XCTAssertLessThanOrEqual(worst, 2, "\(filter) \(w)×\(h)")
                let shrunk = try noisy.resized(width: w, height: h, filter: filter)
                for c in 0..<4 {
                    XCTAssertEqual(Patterns.mean(shrunk, channel: c), Patterns.mean(noisy, channel: c), accuracy: w * h < 10 ? 8 : 2,
                                   "\(filter) \(w)×\(h) channel \(c)")
                }
            }
        }
    }

    func testStraightAlphaRowsArePremultipliedFirst() throws {
        let straight = try noise(width: 20, height: 14, seed: 99, format: .rgba8)
        for filter in [ResamplingFilter.area, .lanczos3] {
            let display = try stream(straight, width: 9, height: 6, filter: filter, resultFormat: .rgba8Premultiplied)
            XCTAssertEqual(display.pixelFormat, .rgba8Premultiplied)
            Patterns.assertValidPremultiplied(display)
            assertWithinOne(display, try reference(straight, width: 9, height: 6, filter: filter), "\(filter)")
            let sameFormat = try stream(straight, width: 9, height: 6, filter: filter)
            XCTAssertEqual(sameFormat.pixelFormat, .rgba8)
            XCTAssertEqual(sameFormat, try straight.resized(width: 9, height: 6, filter: filter))
            XCTAssertEqual(sameFormat, display.converted(to: .rgba8))
        }
    }

    func testHoldsOnlyAFewRowsForAnyShrinkFactor() throws {
        for (filter, most) in [(ResamplingFilter.area, 2), (.triangle, 3), (.mitchell, 5), (.lanczos3, 7)] {
            for sourceHeight in [3_000, 12_345, 100_000] {
                let resampler = try RowResampler(sourceWidth: 8, sourceHeight: sourceHeight, destinationWidth: 4,
                                                 destinationHeight: 300, filter: filter)
                XCTAssertLessThanOrEqual(resampler.accumulatorRowCount, most, "\(filter) \(sourceHeight)")
            }
        }
    }

    func testRowsAreProducedAsTheirWindowsCompleteAndPartialResultsAreFinal() throws {
        let source = try noise(width: 40, height: 40, seed: 3)
        let expected = try source.resized(width: 10, height: 10, filter: .area)
        let resampler = try RowResampler(sourceWidth: 40, sourceHeight: 40, destinationWidth: 10, destinationHeight: 10, filter: .area)
        let packed = source.packedBytes
        for y in 0..<20 {
            try packed[y * 160 ..< (y + 1) * 160].withUnsafeBytes { try resampler.consume(row: $0) }
        }
        XCTAssertEqual(resampler.rowsConsumed, 20)
        XCTAssertEqual(resampler.rowsProduced, 5) // each destination row covers exactly 4 source rows
        let partial = resampler.partialResult()
        for y in 0..<10 {
            for x in 0..<10 {
                XCTAssertEqual(partial.pixel(x: x, y: y), y < 5 ? expected.pixel(x: x, y: y) : RGBA(r: 0, g: 0, b: 0, a: 0))
            }
        }
        XCTAssertThrowsError(try resampler.finish()) { error in
            XCTAssertEqual(error as? ImageProcessingError, .incompleteSource(rowsConsumed: 20, sourceHeight: 40))
        }
    }

    func testMisuseThrowsTypedErrors() throws {
        let resampler = try RowResampler(sourceWidth: 4, sourceHeight: 2, destinationWidth: 2, destinationHeight: 1)
        let short = [UInt8](repeating: 0, count: 15)
        XCTAssertThrowsError(try short.withUnsafeBytes { try resampler.consume(row: $0) }) { error in
            XCTAssertEqual(error as? ImageProcessingError, .rowTooShort(byteCount: 15, expected: 16))
        }
        XCTAssertEqual(resampler.rowsConsumed, 0)
        let row = [UInt8](repeating: 255, count: 16)
        try row.withUnsafeBytes { try resampler.consume(row: $0) }
        try row.withUnsafeBytes { try resampler.consume(row: $0) }
        XCTAssertThrowsError(try row.withUnsafeBytes { try resampler.consume(row: $0) }) { error in
            XCTAssertEqual(error as? ImageProcessingError, .tooManyRows(sourceHeight: 2))
        }
        XCTAssertEqual(try resampler.finish(), try Patterns.solid(width: 2, height: 1, RGBA(r: 255, g: 255, b: 255)))

        XCTAssertThrowsError(try RowResampler(sourceWidth: 0, sourceHeight: 5, destinationWidth: 1, destinationHeight: 1))
        XCTAssertThrowsError(try RowResampler(sourceWidth: 5, sourceHeight: 5, destinationWidth: -1, destinationHeight: 1))
        XCTAssertThrowsError(try RowResampler(sourceWidth: Int.max, sourceHeight: 5, destinationWidth: 1, destinationHeight: 1)) { error in
            XCTAssertEqual(error as? ImageProcessingError, .invalidSize(width: Int.max, height: 5))
        }
        XCTAssertThrowsError(try RowResampler(sourceWidth: 5, sourceHeight: 5, destinationWidth: 1 << 20, destinationHeight: 1 << 20))
    }

    func testBatchesOfPaddedRowsEqualOneRowAtATime() throws {
        var padded = try PixelBuffer(width: 30, height: 20, bytesPerRow: 30 * 4 + 12)
        let source = try noise(width: 30, height: 20, seed: 4)
        for y in 0..<20 { for x in 0..<30 { padded.setPixel(x: x, y: y, to: source.pixel(x: x, y: y)) } }
        let resampler = try RowResampler(sourceWidth: 30, sourceHeight: 20, destinationWidth: 7, destinationHeight: 4)
        try padded.withUnsafeBytes { bytes in
            let stride = padded.bytesPerRow
            try resampler.consume(rows: UnsafeRawBufferPointer(rebasing: bytes[0 ..< 8 * stride]), bytesPerRow: stride, count: 8)
            XCTAssertThrowsError(try resampler.consume(rows: UnsafeRawBufferPointer(rebasing: bytes[8 * stride ..< 10 * stride]),
                                                       bytesPerRow: stride, count: 3)) { error in
                XCTAssertEqual(error as? ImageProcessingError, .rowTooShort(byteCount: 2 * stride, expected: 2 * stride + 120))
            }
            XCTAssertEqual(resampler.rowsConsumed, 8)
            try resampler.consume(rows: UnsafeRawBufferPointer(rebasing: bytes[8 * stride ..< bytes.count]), bytesPerRow: stride, count: 12)
        }
        XCTAssertEqual(try resampler.finish(), try source.resized(width: 7, height: 4))
    }
}
