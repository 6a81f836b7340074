import Foundation
import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// AVIF grids with many tiles: libavif 0.11 keeps an AV1 decoder per tile (about 400 KB with dav1d), so the
/// tile count is bounded (`AVIFDecoder.maximumGridTiles`) before libavif reads the file.
final class AVIFGridTileTests: XCTestCase {
    /// A grid of `side × side` copies of one 64×64 AV1 still (encoded here by libavif), each its own item.
    private func grid(side: Int) throws -> Data {
        guard AVIFCodec.isEncodingAvailable else { throw XCTSkip("this libavif has no AV1 encoder (\(AVIFCodec.codecVersions))") }
        var buffer = try PixelBuffer(width: 64, height: 64, pixelFormat: .rgba8)
        for y in 0..<64 { for x in 0..<64 { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 4), g: UInt8(y * 4), b: 90, a: 255)) } }
        let still = try AVIFEncoder().encode([ImageFrame(buffer: buffer)], format: .avif, loopCount: 1, options: EncodeOptions())
        let tile = try XCTUnwrap(HEIFCodedItem(still, item: 1))
        let ids = (2...side * side + 1).map(UInt16.init)
        let size = UInt32(64 * side)
        var file = HEIFFileBuilder(items: [.init(id: 1, type: "grid", data: HEIFFileBuilder.grid(rows: UInt8(side), columns: UInt8(side), width: size, height: size),
                                                 properties: [HEIFFileBuilder.ispe(width: size, height: size), HEIFFileBuilder.pixi([8, 8, 8])])]
                                          + ids.map { .init(id: $0, type: "av01", data: tile.data, properties: tile.properties, isHidden: true) },
                                   references: [.init(type: "dimg", from: 1, to: ids)])
        file.brands = ["avif", "mif1", "avif", "miaf"]
        return file.build()
    }

    func testGridWithinTheTileBoundDecodes() throws {
        let image = try AVIFDecoder().decode(try grid(side: 4), options: DecodeOptions(pixelFormat: .rgba8))
        XCTAssertEqual(image.width, 256)
        let pixel = image.firstFrame.buffer.pixel(x: 64 + 32, y: 128 + 16)  // tile (1, 2), pixel (32, 16)
        XCTAssertEqual(Int(pixel.r), 128, accuracy: 12)
        XCTAssertEqual(Int(pixel.g), 64, accuracy: 12)
    }

    /// 23 × 23 = 529 tiles: libavif would hold 529 AV1 decoders (about 210 MB) for a 1472 × 1472 image,
    /// and 65,536 (26 GB) for a 256 × 256 grid of 1 × 1 tiles. Without the bound the decode succeeds.
    func testGridPastTheTileBoundIsRefusedBeforeDecoding() throws {
        let data = try grid(side: 23)
        XCTAssertThrowsError(try AVIFDecoder().decode(data, options: DecodeOptions())) { error in
            XCTAssertEqual(error as? ImageCodecError, .limitExceeded(limit: .frameCount, actual: 529, maximum: 512))  // AVIFDecoder.maximumGridTiles
        }
        // The header alone decodes nothing: `info` still answers.
        XCTAssertEqual(try AVIFDecoder().info(data).width, 1472)
    }
}
