import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// Progressive previews (the incremental decoder's partial images) are colour-managed like the final image.
final class ColorProgressiveTests: XCTestCase {
    /// A 256 × 256 chart tagged with Display P3 by ImageMagick (assigned, not converted): progressive JPEG or PNG.
    private func tagged(_ ext: String, _ arguments: [String]) throws -> Data {
        try ColorTestSupport.require(tools: ["convert"], files: [ColorTestSupport.displayP3])
        let dir = try ColorTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.png"), out = dir.appendingPathComponent("tagged.\(ext)")
        try Image(buffer: ColorTestSupport.chart(size: 256)).encoded(as: .png).write(to: chart)
        _ = try ReferenceDecoder.run("convert", [chart.path, "-profile", ColorTestSupport.displayP3] + arguments + [out.path])
        return try Data(contentsOf: out)
    }

    /// Feeds `data` in ten chunks to a colour-managed and a `.preserve` decoder side by side; returns each
    /// partial image pair and the final managed image.
    private func feed(_ data: Data) throws -> (pairs: [(managed: Image, raw: Image)], final: Image) {
        let managed = IncrementalDecoder(options: DecodeOptions(pixelFormat: .rgba8))
        let raw = IncrementalDecoder(options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
        var pairs: [(Image, Image)] = []
        let chunk = max(1, data.count / 10)
        var offset = 0
        while offset < data.count {
            let piece = data.subdata(in: offset..<min(data.count, offset + chunk))
            offset += piece.count
            try managed.update(piece, isFinal: false)
            try raw.update(piece, isFinal: false)
            if let a = try managed.makeImage(), let b = try raw.makeImage(), pairs.last.map({ $0.0 !== a }) ?? true {
                pairs.append((a, b))
            }
        }
        try managed.update(Data(), isFinal: true)
        return (pairs, try XCTUnwrap(managed.makeImage()))
    }

    /// Each partial image is the `.preserve` one through the same transform as the final image.
    private func assertManaged(_ pairs: [(managed: Image, raw: Image)], _ icc: Data, _ label: String) {
        let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: icc), layout: .rgba, management: .sRGB)
        XCTAssertNotNil(plan.transform)
        XCTAssertFalse(pairs.isEmpty, "\(label): partial images were made")
        for (index, pair) in pairs.enumerated() {
            var expected = pair.raw.firstFrame.buffer
            plan.apply(to: &expected)
            XCTAssertEqual(pair.managed.firstFrame.buffer, expected, "\(label) partial image \(index)")
        }
    }

    func testProgressiveJPEGPreviewsAgreeWithTheFinalImage() throws {
        let data = try tagged("jpg", ["-interlace", "JPEG", "-quality", "95", "-sampling-factor", "1x1"])
        let icc = try XCTUnwrap(try ColorTestSupport.decode(data, .preserve).colorSpace?.iccProfile)
        let (pairs, final) = try feed(data)
        assertManaged(pairs, icc, "progressive JPEG")
        // The last preview (most scans) against the final image, in ΔE00: close, and closer than unmanaged.
        let last = try XCTUnwrap(pairs.last)
        let managed = try XCTUnwrap(ColorTestSupport.compare(last.managed.firstFrame.buffer, final.firstFrame.buffer))
        let raw = try XCTUnwrap(ColorTestSupport.compare(last.raw.firstFrame.buffer, final.firstFrame.buffer))
        print("progressive JPEG, last preview vs final: managed \(managed), unmanaged \(raw)")
        XCTAssertLessThanOrEqual(managed.mean, 1.0)
        XCTAssertLessThan(managed.mean, raw.mean)
    }

    func testPNGPreviewRowsEqualTheFinalImage() throws {
        let data = try tagged("png", [])
        let icc = try XCTUnwrap(try ColorTestSupport.decode(data, .preserve).colorSpace?.iccProfile)
        let (pairs, final) = try feed(data)
        assertManaged(pairs, icc, "PNG")
        // Decoded rows of every preview are exactly the final image's rows.
        for (index, pair) in pairs.enumerated() {
            let buffer = pair.managed.firstFrame.buffer
            let rows = IncrementalFeeding.opaqueRowPrefix(buffer)
            for y in stride(from: 0, to: rows, by: 7) {
                for x in stride(from: 0, to: buffer.width, by: 5) {
                    XCTAssertEqual(buffer.pixel(x: x, y: y), final.firstFrame.buffer.pixel(x: x, y: y), "preview \(index) (\(x), \(y))")
                }
            }
        }
    }
}
