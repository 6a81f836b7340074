import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// A decoder that claims a format and always throws (a codec that fails must not take down the others).
struct ThrowingDecoder: ImageDecoding {
    struct Failure: Error {}
    var formats: [ImageFormat]
    var error: (any Error)? = nil
    var capabilities: ImageCodecCapabilities { [.still, .incremental] }
    func canDecode(_ data: Data, context: ImageDecodingContext) -> Bool {
        formats.contains(context.format) || (formats.contains(.unknown) && data.prefix(4).elementsEqual("TINY".utf8))
    }
    func decode(_ data: Data, options: DecodeOptions) throws -> Image { throw error ?? Failure() }
    func info(_ data: Data) throws -> ImageInfo { throw error ?? Failure() }
}

/// A decoder registered for PNG that returns a 1×1 marker image: a higher-priority codec overrides a built-in one.
struct MarkerPNGDecoder: ImageDecoding {
    static let marker = RGBA(r: 1, g: 2, b: 3, a: 255)
    var formats: [ImageFormat] { [.png] }
    var capabilities: ImageCodecCapabilities { .still }
    func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        var buffer = try PixelBuffer(width: 1, height: 1, pixelFormat: options.pixelFormat)
        buffer.setPixel(x: 0, y: 0, to: Self.marker)
        return Image(buffer: buffer, format: .png)
    }
    func info(_ data: Data) throws -> ImageInfo { ImageInfo(format: .png, width: 1, height: 1, hasAlpha: false) }
}

final class ImageCodecRegistryTests: XCTestCase {
    /// A 3×2, two-frame TINY file.
    static func tinyFile(width: Int = 3, height: Int = 2) throws -> (Data, [PixelBuffer]) {
        let frames = try (0..<2).map { f -> PixelBuffer in
            var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
            for y in 0..<height { for x in 0..<width {
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 40 & 0xFF), g: UInt8(y * 60 & 0xFF), b: UInt8(f * 100), a: 255))
            } }
            return buffer
        }
        let data = try TinyCodec().encode(frames.map { ImageFrame(buffer: $0, duration: 0.25) }, format: .unknown,
                                          loopCount: 0, options: EncodeOptions())
        return (data, frames)
    }

    func testRegisteredCodecIsPickedByImageDecoderAndInfo() throws {
        let (data, frames) = try Self.tinyFile()
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { XCTAssertEqual($0 as? ImageCodecError, .unknownFormat) }

        let token = ImageCodecRegistry.shared.register(decoder: TinyCodec())
        let image = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
        XCTAssertEqual(image.frameCount, 2)
        XCTAssertEqual(image.duration(at: 1), 0.25)
        XCTAssertEqual(try image.frame(at: 1).buffer, frames[1])
        XCTAssertEqual(try ImageDecoder.info(data).width, 3)
        XCTAssertTrue(ImageCodecRegistry.shared.additionalMIMETypes.contains(TinyCodec.mimeType))

        ImageCodecRegistry.shared.unregister(token)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { XCTAssertEqual($0 as? ImageCodecError, .unknownFormat) }
        XCTAssertFalse(ImageCodecRegistry.shared.additionalMIMETypes.contains(TinyCodec.mimeType))
    }

    func testLimitsOfARegisteredCodecApply() throws {
        let (data, _) = try Self.tinyFile(width: 40, height: 40)
        let token = ImageCodecRegistry.shared.register(decoder: TinyCodec())
        defer { ImageCodecRegistry.shared.unregister(token) }
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 100)))) {
            XCTAssertEqual($0 as? ImageCodecError, .limitExceeded(limit: .pixelsPerFrame, actual: 1600, maximum: 100))
        }
    }

    func testHigherPriorityCodecOverridesTheBuiltInOne() throws {
        var source = try PixelBuffer(width: 8, height: 4)
        source.setPixel(x: 0, y: 0, to: RGBA(r: 200, g: 0, b: 0, a: 255))
        let png = try Image(buffer: source).encoded(as: .png)
        XCTAssertEqual(try ImageDecoder.decode(png).width, 8)

        let token = ImageCodecRegistry.shared.register(decoder: MarkerPNGDecoder())
        let overridden = try ImageDecoder.decode(png)
        XCTAssertEqual(overridden.width, 1)
        XCTAssertEqual(overridden.firstFrame.buffer.pixel(x: 0, y: 0), MarkerPNGDecoder.marker)
        // The incremental decoder goes through the registry too: no libpng stream, the marker at the end.
        let incremental = IncrementalDecoder()
        try incremental.update(png.prefix(60), isFinal: false)
        XCTAssertNil(try incremental.makeImage(), "the override makes no partial images")
        try incremental.update(png.dropFirst(60), isFinal: true)
        XCTAssertEqual(try incremental.makeImage()?.width, 1)

        ImageCodecRegistry.shared.unregister(token)
        XCTAssertEqual(try ImageDecoder.decode(png).width, 8)
    }

    func testAThrowingCodecFallsThroughToTheNext() throws {
        let png = try Image(buffer: try PixelBuffer(width: 5, height: 5)).encoded(as: .png)
        let (tiny, _) = try Self.tinyFile()
        let below = ImageCodecRegistry.shared.register(decoder: TinyCodec())
        let throwing = ImageCodecRegistry.shared.register(decoder: ThrowingDecoder(formats: [.png, .unknown]))
        defer { [below, throwing].forEach(ImageCodecRegistry.shared.unregister) }

        XCTAssertEqual(try ImageDecoder.decode(png).width, 5, "the built-in PNG decoder still runs")
        XCTAssertEqual(try ImageDecoder.decode(tiny).width, 3, "the TINY codec below still runs")
        XCTAssertEqual(try ImageDecoder.info(tiny).frameCount, 2)
    }

    func testWhenEveryCodecFailsTheMostTellingErrorIsReported() throws {
        let registry = ImageCodecRegistry(includesBuiltIns: false)
        let (tiny, _) = try Self.tinyFile()
        registry.register(decoder: ThrowingDecoder(formats: [.unknown], error: ImageCodecError.limitExceeded(limit: .frameCount, actual: 9, maximum: 1)))
        registry.register(decoder: ThrowingDecoder(formats: [.unknown]))  // not an ImageCodecError: kept as text
        XCTAssertThrowsError(try registry.decode(tiny)) {
            XCTAssertEqual($0 as? ImageCodecError, .limitExceeded(limit: .frameCount, actual: 9, maximum: 1))
        }
        let other = ImageCodecRegistry(includesBuiltIns: false)
        other.register(decoder: ThrowingDecoder(formats: [.unknown]))
        XCTAssertThrowsError(try other.decode(tiny)) { error in
            guard case .corruptData(_, let message)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("Failure"), message)
        }
        XCTAssertThrowsError(try other.decode(Data([0xFF, 0xD8, 0xFF]))) {
            XCTAssertEqual($0 as? ImageCodecError, .unsupportedFormat(.jpeg), "no decoder for JPEG in this registry")
        }
    }

    func testIncrementalDecoderUsesTheCodecsSession() throws {
        let (data, frames) = try Self.tinyFile(width: 16, height: 16)
        let token = ImageCodecRegistry.shared.register(decoder: TinyCodec())
        defer { ImageCodecRegistry.shared.unregister(token) }
        let options = DecodeOptions(pixelFormat: .rgba8)
        var partialRows: [Int] = []
        let decoder = try IncrementalFeeding.feed(data, options: options, sizes: { 200 }) { image, _ in
            let rows = (0..<16).filter { image.firstFrame.buffer.pixel(x: 0, y: $0).a == 255 }.count
            partialRows.append(rows)
        }
        XCTAssertGreaterThan(partialRows.count, 2, "partial images while the first frame arrives")
        XCTAssertEqual(partialRows, partialRows.sorted())
        let final = try XCTUnwrap(decoder.makeImage())
        XCTAssertFalse(final.isPartial)
        XCTAssertEqual(final.frameCount, 2)
        XCTAssertEqual(final.firstFrame.buffer, frames[0])
        IncrementalFeeding.assertMatchesOneShot(decoder, data, options: options, "tiny")
    }

    func testEncoderRegistryOverridesAndFallsBack() throws {
        let image = Image(buffer: try PixelBuffer(width: 2, height: 2))
        XCTAssertThrowsError(try image.encoded(as: .bmp)) { XCTAssertEqual($0 as? ImageCodecError, .unsupportedEncoding(.bmp)) }
        XCTAssertFalse(ImageCodecRegistry.shared.canEncode(.unknown))
        let token = ImageCodecRegistry.shared.register(encoder: TinyCodec())
        defer { ImageCodecRegistry.shared.unregister(token) }
        let data = try image.encoded(as: .unknown)
        XCTAssertTrue(data.starts(with: Array("TINY".utf8)))
        XCTAssertEqual(ImageFormat.sniff(try image.encoded(as: .png)), .png, "other formats still built in")
    }

    func testBuiltInSetAndFormatsWithoutModules() {
        let registry = ImageCodecRegistry()
        for format in [ImageFormat.jpeg, .png, .apng, .gif, .webp] { XCTAssertTrue(registry.canDecode(format), "\(format)") }
        XCTAssertEqual(registry.additionalMIMETypes, [])
        XCTAssertEqual(ImageCodecRegistry(includesBuiltIns: false).decoders.count, 0)
    }
}
