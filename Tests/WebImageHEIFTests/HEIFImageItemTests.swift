import Foundation
import ImageCodec
import TestSupport
@testable import WebImageHEIF
import XCTest

/// Image items that make libheif 1.15 (and libde265) allocate past the limits or write out of bounds, built
/// box by box: grids and overlays (`grid`, `iovl`) with large canvases or alpha below them, coded images
/// whose HEVC parameter sets declare a larger size than their `ispe`. Each must be refused with a typed
/// error before libheif decodes; the layouts encoders write still decode.
final class HEIFImageItemTests: XCTestCase {
    private typealias Builder = HEIFFileBuilder

    private func assertLimitExceeded(_ data: Data, limits: DecodeLimits, actual expected: Int,
                                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try HEIFDecoder().decode(data, options: DecodeOptions(limits: limits)), file: file, line: line) { error in
            guard case .limitExceeded(.pixelsPerFrame, let actual, _)? = error as? ImageCodecError else {
                return XCTFail("\(error)", file: file, line: line)
            }
            XCTAssertEqual(actual, expected, file: file, line: line)
        }
    }

    /// An overlay whose `ispe` says 64×64 but whose data declares a 4096×4096 canvas: libheif 1.15 allocates
    /// and fills the canvas before it decodes the first layer (here a broken one, so without the check the
    /// error is the layer's). At 32767×32767 that is 3 GB, 7 GB with the RGBA conversion, from 200 bytes:
    /// `make fuzz` dies of its RSS limit. The declared canvas is checked against the limits first.
    func testOverlayCanvasPastTheLimitsIsRefusedBeforeDecoding() {
        let file = Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 4096, height: 4096, offsets: [(0, 0)])),
                                   .init(id: 2, type: "iden", isHidden: true)],
                           references: [.init(type: "dimg", from: 1, to: [2])])
        assertLimitExceeded(file.build(), limits: DecodeLimits(maxPixelsPerFrame: 1 << 20), actual: 4096 * 4096)
        // `info` decodes nothing and reports the declared size.
        XCTAssertEqual(try HEIFDecoder().info(file.build()).width, 64)
    }

    /// The same for a grid: a 1×1 grid declaring an 8192×8192 output (libheif allocates three planes for
    /// it before the tile).
    func testGridCanvasPastTheLimitsIsRefusedBeforeDecoding() {
        let file = Builder(items: [.init(id: 1, type: "grid", data: Builder.grid(rows: 1, columns: 1, width: 8192, height: 8192),
                                         properties: [Builder.ispe(width: 64, height: 64), Builder.pixi([8, 8, 8])]),
                                   .init(id: 2, type: "iden", isHidden: true)],
                           references: [.init(type: "dimg", from: 1, to: [2])])
        assertLimitExceeded(file.build(), limits: DecodeLimits(maxPixelsPerFrame: 1 << 20), actual: 8192 * 8192)
    }

    /// A canvas inside the limits decodes: an overlay without layers is its background.
    func testOverlayInsideTheLimitsDecodesToItsBackground() throws {
        let file = Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 64, background: [0xFFFF, 0, 0, 0xFFFF]))],
                           references: [.init(type: "dimg", from: 99, to: [98])])  // libheif wants an `iref`
        let image = try HEIFDecoder().decode(file.build(), options: DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 64 * 64)))
        XCTAssertEqual(image.width, 64)
        XCTAssertEqual(image.firstFrame.buffer.pixel(x: 63, y: 63), RGBA(r: 255, g: 0, b: 0, a: 255))
    }

    /// Item 1 of a corpus file.
    private func corpusItem(_ name: String, format: String = "heic") throws -> HEIFCodedItem {
        let url: URL
        do {
            url = try XCTUnwrap(try ModernCorpus.entries(format: format).first { $0.path.hasSuffix(name) }).url
        } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        return try XCTUnwrap(HEIFCodedItem(try Data(contentsOf: url), item: 1))
    }

    /// The 10-bit HEVC tile of `pillowheif__RGB_10__29x100.heif` (64×100) as an item of a built file.
    private func tenBitTile(id: UInt16) throws -> Builder.Item {
        let tile = try corpusItem("pillowheif__RGB_10__29x100.heif")
        XCTAssertTrue(tile.properties.contains(Builder.ispe(width: 64, height: 100)))
        return .init(id: id, type: "hvc1", data: tile.data, properties: tile.properties, isHidden: true)
    }

    /// The 8-bit tile of `pillowheif__RGB_8__29x100.heif` (`ispe` 64×100; its SPS codes 64×104, cropped by
    /// the conformance window) with its SPS rewritten to code 8192×8192: libde265 allocates, and libheif
    /// converts, 8192×8188 pixels (500 MB of RSS for a 3 KB file; up to 65535² are accepted) before the
    /// decoded size can be checked. The coded size is checked against the limits first: the error reports
    /// it (8192 × 8192); without the check, the decoded size (8192 × 8188) after the decode.
    func testCodedSizePastTheLimitsIsRefusedBeforeDecoding() throws {
        let tile = try corpusItem("pillowheif__RGB_8__29x100.heif")
        let hvcC = try XCTUnwrap(tile.properties.first { $0.dropFirst(4).prefix(4) == Data("hvcC".utf8) })
        let large = try XCTUnwrap(HEVCSequenceParameterSet.hvcC(hvcC, settingWidth: 8192, height: 8192))
        let limits = DecodeLimits(maxPixelsPerFrame: 1 << 20)
        let original = Builder(items: [.init(id: 1, type: "hvc1", data: tile.data, properties: tile.properties)], references: [])
        let image = try HEIFDecoder().decode(original.build(), options: DecodeOptions(limits: limits))
        XCTAssertEqual(image.width, 64)
        XCTAssertEqual(image.height, 100)

        // The large SPS in the `hvcC` property.
        var file = original
        file.items[0].properties = tile.properties.map { $0 == hvcC ? large : $0 }
        assertLimitExceeded(file.build(), limits: limits, actual: 8192 * 8192)

        // The same SPS in the item's data, after the small one of the `hvcC`, then the PPS again (libde265
        // takes the last of each).
        let units = try [33, 34].map { try XCTUnwrap(HEVCSequenceParameterSet.units(ofType: $0, in: large).first) }
        file = original
        file.items[0].data = units.map { Builder.be32(UInt32($0.count)) + $0 }.reduce(Data(), +) + tile.data
        assertLimitExceeded(file.build(), limits: limits, actual: 8192 * 8192)
    }

    /// An 8-bit alpha image (an overlay, so no codec) of 64×100 for item `id`.
    private func alpha(id: UInt16) -> Builder.Item {
        .init(id: id, type: "iovl", data: Builder.overlay(width: 64, height: 100, background: [0x8000, 0, 0, 0xFFFF]),
              properties: [Builder.ispe(width: 64, height: 100), Builder.alphaAuxC], isHidden: true)
    }

    /// Debian's libheif 1.15 decodes `av01` items too (dav1d, libaom), with no frame size limit: the 1×1
    /// image of `libavif__white_1x1.avif` in a HEIF file, its sequence header rewritten to allow frames of
    /// 8192×8192, made dav1d allocate 400 MB before failing. The sequence header's size is checked first.
    func testAV1SequenceHeaderPastTheLimitsIsRefusedBeforeDecoding() throws {
        let white = try corpusItem("libavif__white_1x1.avif", format: "avif")
        let original = Builder(items: [.init(id: 1, type: "av01", data: white.data, properties: white.properties)], references: [])
        let image = try HEIFDecoder().decode(original.build(), options: DecodeOptions())
        XCTAssertEqual(image.width, 1)
        XCTAssertGreaterThan(image.firstFrame.buffer.pixel(x: 0, y: 0).g, 240, "white (YUV rounding: 253)")

        var file = original
        file.items[0].data = try XCTUnwrap(AV1SequenceHeader.stream(white.data, settingWidth: 8192, height: 8192))
        assertLimitExceeded(file.build(), limits: DecodeLimits(maxPixelsPerFrame: 1 << 20), actual: 8192 * 8192)
    }

    /// A 60×60 grid whose 3,600 references name one 8-bit tile (coded 64×104) whose `ispe` says 1×1: libheif
    /// 1.15 decodes the tile 3,600 times (24 Mpx of decoding for a 60×60 image; 255×255 references take half
    /// a minute, a larger tile hours: `make fuzz`'s 30 s timeout). Refused when decodes × the coded size
    /// pass `maxTotalPixels` (10 Mpx here); without the check the decode returns the 60×60 image.
    func testRepeatedTileDecodesPastTheTotalPixelLimitAreRefused() throws {
        let tile = try corpusItem("pillowheif__RGB_8__29x100.heif")
        let properties = tile.properties.map { $0.dropFirst(4).prefix(4) == Data("ispe".utf8) ? Builder.ispe(width: 1, height: 1) : $0 }
        let file = Builder(items: [.init(id: 1, type: "grid", data: Builder.grid(rows: 60, columns: 60, width: 60, height: 60),
                                         properties: [Builder.ispe(width: 60, height: 60), Builder.pixi([8, 8, 8])]),
                                   .init(id: 2, type: "hvc1", data: tile.data, properties: properties, isHidden: true)],
                           references: [.init(type: "dimg", from: 1, to: Array(repeating: 2, count: 3600))])
        XCTAssertThrowsError(try HEIFDecoder().decode(file.build(), options: DecodeOptions(limits: DecodeLimits(maxTotalPixels: 10_000_000)))) { error in
            guard case .limitExceeded(.totalPixels, let actual, _)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertEqual(actual, 3601 * 64 * 104 + 60 * 60, "grid + 3,600 tile decodes at the coded size, plus one canvas")
        }
    }

    /// libheif 1.15 inflates a deflate-compressed `mime` item (XMP) while reading the file, for `info` too,
    /// without a bound (a 100 KB zlib stream of zeros made 100 MB; 20 items pointing at the same bytes took
    /// 7 s). 300 KB of compressed metadata (47 MB inflated, here with fixed codes) is refused before libheif
    /// reads the file; a small item still passes. Without the check `info` answers.
    func testDeflatedMetadataPastTheBoundIsRefusedBeforeReading() throws {
        func file(matches: Int) -> Data {
            Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 64)),
                            .init(id: 2, type: "mime", data: Builder.zlibZeros(matches: matches), contentEncoding: "deflate")],
                    references: [.init(type: "dimg", from: 99, to: [98])]).build()  // libheif wants an `iref`
        }
        XCTAssertEqual(try HEIFDecoder().info(file(matches: 1000)).width, 64)
        XCTAssertEqual(try HEIFDecoder().decode(file(matches: 1000), options: DecodeOptions()).width, 64)
        let large = file(matches: 190_000)  // 309 KB
        XCTAssertGreaterThan(large.count, 256 << 10)
        for (name, call) in [("info", { _ = try HEIFDecoder().info(large) }),
                             ("decode", { _ = try HEIFDecoder().decode(large, options: DecodeOptions()) })] as [(String, () throws -> Void)] {
            XCTAssertThrowsError(try call(), name) { error in
                guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(name): \(error)") }
                XCTAssertTrue(message.contains("deflate"), message)
            }
        }
    }

    /// libheif 1.15 copies every item's data while reading the file, and an item's 32 `iloc` extents may all
    /// name the same bytes (200 items of 32 extents naming a shared 500 KB took 3.2 GB of copies; 20,000 in
    /// a 6 MB file, terabytes). Item data adding up to more than four times the file plus 1 MiB is refused
    /// before libheif reads it: here 200 items of 16 KB named 32 times (100 MB from a 3.2 MB file). Without
    /// the check `info` answers.
    func testItemDataReadManyTimesOverIsRefusedBeforeReading() throws {
        var items: [Builder.Item] = [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 64))]
        for id in 2...201 {
            var item = Builder.Item(id: UInt16(id), type: "Exif", data: Data(repeating: UInt8(id & 0xFF), count: 16 << 10))
            item.extentCount = 32
            items.append(item)
        }
        let data = Builder(items: items, references: [.init(type: "dimg", from: 999, to: [998])]).build()
        XCTAssertThrowsError(try HEIFDecoder().info(data)) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("four times"), message)
        }
        // Named once each, the same items pass.
        for index in items.indices { items[index].extentCount = 1 }
        XCTAssertEqual(try HEIFDecoder().info(Builder(items: items, references: [.init(type: "dimg", from: 999, to: [998])]).build()).width, 64)
    }

    /// libheif 1.15 looks each grid tile up among all image items by a linear search, for `info` too: a
    /// 255×255 grid over 5,000 items makes 3.3 × 10^8 steps a call (65,025 among 19,990 took 8 s). Refused
    /// past 2^26 before libheif reads the file; without the check `info` answers after the search.
    func testGridReferencesSearchedAmongManyItemsAreRefused() throws {
        let ids = (2...5001).map(UInt16.init)
        let items = [Builder.Item(id: 1, type: "grid", data: Builder.grid(rows: 255, columns: 255, width: 255, height: 255),
                                  properties: [Builder.ispe(width: 255, height: 255), Builder.pixi([8, 8, 8])])]
            + ids.map { Builder.Item(id: $0, type: "iden", isHidden: true) }
        let tiles = (0..<255 * 255).map { ids[$0 % ids.count] }
        let data = Builder(items: items, references: [.init(type: "dimg", from: 1, to: tiles)]).build()
        XCTAssertThrowsError(try HEIFDecoder().info(data)) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("65025 references among 5001 items"), message)
        }
    }

    /// While reading a file libheif 1.15 scans every `iref` entry for each item, and rebuilds its list of
    /// top-level images for each thumbnail: 4,000 items, each five times the thumbnail (`thmb`) of the
    /// primary, make 8 × 10^7 steps (19,990 items once each took 4.6 s). Refused past 2^26 before libheif
    /// reads the file; without the check `info` answers after the scans.
    func testManyReferenceEntriesAmongManyItemsAreRefused() throws {
        let ids = (2...4_001).map(UInt16.init)
        let data = Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 64))] + ids.map { .init(id: $0, type: "iden") },
                           references: ids.flatMap { id in (0..<5).map { _ in .init(type: "thmb", from: id, to: [1]) } }).build()
        XCTAssertThrowsError(try HEIFDecoder().info(data)) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("20000 item references among 4001 items"), message)
        }
    }

    /// libheif 1.15 looks each item up among all items' property associations and locations while reading:
    /// 19,990 items without any reference took 2.5 s a read. More than 8,192 items are refused before
    /// libheif reads the file; without the check `info` answers.
    func testManyItemsAreRefused() throws {
        let data = Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 64))]
                                  + (2...10_001).map { .init(id: UInt16($0), type: "iden", isHidden: true) },
                           references: [.init(type: "dimg", from: 1, to: [])]).build()
        XCTAssertThrowsError(try HEIFDecoder().info(data)) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("10001 items"), message)
        }
    }

    /// The checks read hostile bytes before libheif does, so they must never trap themselves: seeded
    /// mutations (byte flips, often in sizes and counts, and truncations) of the files above, each read by
    /// every check. A trap kills the test; each variant must end in a result or a typed error.
    func testChecksNeverTrapOnMutatedFiles() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_SEED"] ?? "") ?? 0x1E3F
        var generator = SplitMix64(seed: seed)
        let tile = try tenBitTile(id: 2)
        let seeds = [
            Builder(items: [.init(id: 1, type: "grid", data: Builder.grid(rows: 1, columns: 2, width: 128, height: 100),
                                  properties: [Builder.ispe(width: 128, height: 100), Builder.pixi([10, 10, 10])]), tile, alpha(id: 3)],
                    references: [.init(type: "dimg", from: 1, to: [2, 2]), .init(type: "auxl", from: 3, to: [1])]).build(),
            Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 64, offsets: [(0, 0)])),
                            .init(id: 2, type: "av01", data: try corpusItem("libavif__white_1x1.avif", format: "avif").data),
                            .init(id: 3, type: "mime", data: Builder.zlibZeros(matches: 10), contentEncoding: "deflate")],
                    references: [.init(type: "dimg", from: 1, to: [2])]).build(),
        ]
        var outcomes = [0, 0]
        for round in 0..<4000 {
            var bytes = [UInt8](seeds[round % seeds.count])
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = [0, 0xFF, 1, 0x80, UInt8.random(in: 0...255, using: &generator)].randomElement(using: &generator)!
            }
            if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator)) }
            let data = Data(bytes)
            do {
                let references = HEIFItemReferences(data)
                let decodes = try references.check(maximumDepth: HEIFDecoder.maximumReferenceDepth, maximumDecodes: HEIFDecoder.maximumReferencedDecodes)
                let items = HEIFImageItems(data)
                try items.checkMetadata()
                try items.check(limits: DecodeLimits(maxPixelsPerFrame: 1 << 20))
                try items.checkWork(references, decodes: decodes, limits: .default)
                try items.checkLayerAlpha(references)
                outcomes[0] += 1
            } catch is ImageCodecError {
                outcomes[1] += 1
            } catch {
                return XCTFail("seed \(seed) (WEBIMAGE_SEED), round \(round): \(error)")
            }
        }
        XCTAssertEqual(outcomes.reduce(0, +), 4000, "seed \(seed)")
        XCTAssertGreaterThan(outcomes[1], 0, "some variants are refused")
    }

    /// A grid of 8 copies of a 10-bit tile that has its own 8-bit alpha image: libheif 1.15 copies the alpha
    /// rows with the byte width of the 16-bit colour plane, writing past the grid's alpha plane (valgrind:
    /// "Invalid write" in `decode_and_paste_tile_image`; under ASan, as in `make fuzz`, a heap-buffer-overflow).
    /// Without the check the decode returns an image, or the process dies of the corrupted heap.
    func testGridTileWithItsOwnAlphaImageIsRefused() throws {
        let file = Builder(items: [.init(id: 1, type: "grid", data: Builder.grid(rows: 1, columns: 8, width: 512, height: 100),
                                         properties: [Builder.ispe(width: 512, height: 100), Builder.pixi([10, 10, 10])]),
                                   try tenBitTile(id: 2), alpha(id: 3)],
                           references: [.init(type: "dimg", from: 1, to: Array(repeating: 2, count: 8)), .init(type: "auxl", from: 3, to: [2])])
        XCTAssertThrowsError(try HEIFDecoder().decode(file.build(), options: DecodeOptions())) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("alpha"), message)
        }
    }

    /// An overlay whose layer is a 10-bit image with its own 8-bit alpha image: libheif 1.15 reads the alpha
    /// rows with the stride of the 16-bit colour plane, up to twice past the alpha plane (valgrind: "Invalid
    /// read … 0 bytes after a block" in `HeifPixelImage::overlay`; upstream fixed it in 2026,
    /// GHSA-hg7q-rjr2-8x46). Without the check the decode returns an image blended with bytes from past the
    /// plane; with large planes the read leaves the mapping.
    func testOverlayLayerWithItsOwnAlphaImageIsRefused() throws {
        let file = Builder(items: [.init(id: 1, type: "iovl", data: Builder.overlay(width: 64, height: 100, offsets: [(0, 0)]),
                                         properties: [Builder.ispe(width: 64, height: 100)]),
                                   try tenBitTile(id: 2), alpha(id: 3)],
                           references: [.init(type: "dimg", from: 1, to: [2]), .init(type: "auxl", from: 3, to: [2])])
        XCTAssertThrowsError(try HEIFDecoder().decode(file.build(), options: DecodeOptions())) { error in
            guard case .corruptData(.heif, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("alpha"), message)
        }
        // The same layer without its alpha image composes.
        let plain = Builder(items: file.items.filter { $0.id != 3 }, references: [file.references[0]])
        let image = try HEIFDecoder().decode(plain.build(), options: DecodeOptions())
        XCTAssertEqual(image.width, 64)
        XCTAssertFalse(image.hasAlpha)
    }

    /// The layout encoders write, the grid's alpha on the grid item, still decodes (alpha from the overlay's
    /// red, 0x80).
    func testGridWithAlphaOnTheGridItemDecodes() throws {
        let file = Builder(items: [.init(id: 1, type: "grid", data: Builder.grid(rows: 1, columns: 1, width: 64, height: 100),
                                         properties: [Builder.ispe(width: 64, height: 100), Builder.pixi([10, 10, 10])]),
                                   try tenBitTile(id: 2), alpha(id: 3)],
                           references: [.init(type: "dimg", from: 1, to: [2]), .init(type: "auxl", from: 3, to: [1])])
        let image = try HEIFDecoder().decode(file.build(), options: DecodeOptions())
        XCTAssertEqual(image.width, 64)
        XCTAssertEqual(image.height, 100)
        XCTAssertTrue(image.hasAlpha)
        XCTAssertEqual(image.firstFrame.buffer.pixel(x: 10, y: 10).a, 0x80)
    }
}
