internal import CWebImageAVIF
import Foundation
import ImageCodec
import WebImageSync

/// One parsed AVIF file: a libavif decoder over a private copy of the bytes, kept for the frames of a
/// sequence decoded on demand (it is the animated `Image`'s frame source).
///
/// Wraps `avifDecoderCreate`, `avifDecoderSetIOMemory`, `avifDecoderParse`, `avifDecoderNthImage` and
/// `avifImageYUVToRGB`.
///
/// - Important: Thread-safe: the libavif decoder is used under a lock (`Image` asks for frames from any
///   thread). `@unchecked Sendable` because it holds C pointers, only touched under `lock` or before the
///   session is shared (`init`), and freed in `deinit`.
final class AVIFSession: ImageFrameSource, @unchecked Sendable {
    /// Frames in the file (1 for a still; the layers of a progressive still count as one).
    let frameCount: Int
    /// Whether the file has an alpha plane.
    let hasAlpha: Bool
    /// The displayed size: after `clap`, with width and height swapped by a quarter-turn `irot`.
    let displaySize: (width: Int, height: Int)
    /// What the file said about its colours: the `colr` ICC profile and/or CICP (`nclx`); `nil` for neither.
    let colorSpace: ImageColorSpace?
    /// The colour stage for every frame (from `colorSpace` and the decode's `ColorManagement`).
    let conversion: ColorConversion
    /// Bytes of the 16-bit temporary `frame(at:pixelFormat:)` allocates for a 10/12-bit image whose colour is
    /// converted before it is reduced to 8 bits (8 bytes a coded pixel); 0 when that path does not run.
    let deepTemporaryByteCount: Int
    private let durations: [Double]
    private let transform: AVIFTransform
    private let decoder: UnsafeMutablePointer<avifDecoder>
    private let bytes: UnsafeMutableRawBufferPointer
    private let lock = Mutex(())

    /// Parses `data` with libavif's limits set from `limits`, then checks the declared size and frame count.
    ///
    /// - Throws: `ImageCodecError.limitExceeded` / `.invalidDimensions`, `.truncated`, `.corruptData`.
    init(data: Data, limits: DecodeLimits, colorManagement: ColorManagement = .sRGB) throws {
        guard let decoder = avifDecoderCreate() else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        // libavif reads from memory without copying: keep our own copy for the frames decoded later.
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        _ = data.copyBytes(to: bytes)
        self.decoder = decoder
        self.bytes = bytes
        // Until every stored property is set, a throw must free these by hand.
        do {
            let parsed = try Self.parse(decoder, bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<data.count]), limits: limits)
            frameCount = parsed.frameCount
            hasAlpha = parsed.hasAlpha
            durations = parsed.durations
            transform = parsed.transform
            displaySize = parsed.displaySize
            colorSpace = parsed.colorSpace
            conversion = ColorConversion(colorSpace: parsed.colorSpace, management: colorManagement)
            deepTemporaryByteCount = parsed.depth > 8 && conversion.convertsDeepPixels
                ? Self.deepByteCount(width: parsed.codedSize.width, height: parsed.codedSize.height) : 0
        } catch {
            // libavif 0.11 reports a box cut short as a BMFF parse failure ("Exceeded avifIO's sizeHint, possibly
            // truncated data"): when the data ends inside a top-level box (a download cut in its `mdat`), the
            // file was cut, not corrupt.
            let isCut = BoxReader(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<data.count])).endsInsideATopLevelBox
            avifDecoderDestroy(decoder)
            bytes.deallocate()
            if case ImageCodecError.corruptData? = error as? ImageCodecError, isCut { throw ImageCodecError.truncated(format: .avif) }
            throw error
        }
    }

    deinit {
        avifDecoderDestroy(decoder)
        bytes.deallocate()
    }

    private struct Parsed {
        var frameCount: Int, hasAlpha: Bool, durations: [Double], transform: AVIFTransform
        var displaySize: (width: Int, height: Int)
        var colorSpace: ImageColorSpace?
        var depth: Int
        var codedSize: (width: Int, height: Int)
    }

    /// 8 bytes a pixel (16-bit RGBA), `.max` when that overflows.
    static func deepByteCount(width: Int, height: Int) -> Int {
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: 8)
        return o1 || o2 ? .max : bytes
    }

    private static func parse(_ decoder: UnsafeMutablePointer<avifDecoder>, bytes: UnsafeRawBufferPointer,
                              limits: DecodeLimits) throws -> Parsed {
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        // Before parsing: libavif checks these while reading the headers and before the AV1 decoder allocates.
        // libavif 0.11 refuses a size limit above its default (16384², AVIF_RESULT_NOT_IMPLEMENTED): that is
        // its ceiling whatever our limits say.
        decoder.pointee.imageSizeLimit = UInt32(clamping: min(max(1, limits.maxPixelsPerFrame), Int(AVIF_DEFAULT_IMAGE_SIZE_LIMIT)))
        decoder.pointee.imageDimensionLimit = UInt32(clamping: min(max(1, limits.maxPixelsPerFrame), Int(AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT)))
        decoder.pointee.imageCountLimit = UInt32(clamping: max(1, limits.maxFrameCount))
        try check(avifDecoderSetIOMemory(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count), decoder)
        let parsed = avifDecoderParse(decoder)
        if parsed != AVIF_RESULT_OK { try limitError(decoder, limits: limits) }
        try check(parsed, decoder)
        guard let image = decoder.pointee.image else { throw ImageCodecError.corruptData(format: .avif, message: "no image") }
        let width = Int(image.pointee.width), height = Int(image.pointee.height)
        let frameCount = max(1, decoder.pointee.progressiveState == AVIF_PROGRESSIVE_STATE_ACTIVE ? 1 : Int(decoder.pointee.imageCount))
        try limits.check(width: width, height: height, frameCount: frameCount)
        let transform = try AVIFTransform(image.pointee, width: width, height: height)
        var durations: [Double] = []
        if frameCount > 1 {
            for index in 0..<frameCount {
                var timing = avifImageTiming()
                try check(avifDecoderNthImageTiming(decoder, UInt32(index), &timing), decoder)
                durations.append(ImageFrame.displayDuration(forStoredDelay: timing.duration))
            }
        } else {
            durations = [0]
        }
        return Parsed(frameCount: frameCount, hasAlpha: decoder.pointee.alphaPresent != AVIF_FALSE, durations: durations,
                      transform: transform, displaySize: transform.outputSize, colorSpace: colorSpace(of: image.pointee),
                      depth: Int(image.pointee.depth), codedSize: (width, height))
    }

    /// The `colr` boxes as libavif read them: the ICC profile (`prof`/`rICC`) and the CICP code points (`nclx`;
    /// 2/2/2, libavif's "unspecified" when there is none, is left out). Matrix and range are libavif's YUV job.
    private static func colorSpace(of image: avifImage) -> ImageColorSpace? {
        var colorSpace = ImageColorSpace()
        if let icc = image.icc.data, image.icc.size > 0 { colorSpace.iccProfile = Data(bytes: icc, count: image.icc.size) }
        let (primaries, transfer, matrix) = (image.colorPrimaries, image.transferCharacteristics, image.matrixCoefficients)
        if primaries != 2 || transfer != 2 || matrix != 2 {
            colorSpace.cicp = ImageColorSpace.CICP(colorPrimaries: UInt8(clamping: primaries),
                                                   transferCharacteristics: UInt8(clamping: transfer),
                                                   matrixCoefficients: UInt8(clamping: matrix),
                                                   isFullRange: image.yuvRange == AVIF_RANGE_FULL)
        }
        return colorSpace.isEmpty ? nil : colorSpace
    }

    func duration(at index: Int) -> Double { durations[index] }

    /// Decodes frame `index` (libavif decodes from the nearest keyframe), converts it to 8-bit RGBA and
    /// applies the transforms.
    func decodeFrame(at index: Int, pixelFormat: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        try frame(at: index, pixelFormat: pixelFormat)
    }

    /// Frame `index` in `pixelFormat`, through the colour stage unless `convertsColor` is false (a thumbnail,
    /// converted after its resize: the pixels then stay as the file's colour space says).
    func frame(at index: Int, pixelFormat: PixelBuffer.PixelFormat, convertsColor: Bool = true) throws -> PixelBuffer {
        let conversion = convertsColor ? conversion : ColorConversion(colorSpace: nil, management: .preserve)
        let decoded = try lock.withLock { _ -> PixelBuffer in
            // A progressive still: the last layer is the full image.
            let layer = decoder.pointee.progressiveState == AVIF_PROGRESSIVE_STATE_ACTIVE ? Int(decoder.pointee.imageCount) - 1 : index
            try Self.check(avifDecoderNthImage(decoder, UInt32(layer)), decoder)
            guard let image = decoder.pointee.image else { throw ImageCodecError.corruptData(format: .avif, message: "no image") }
            // The colour stage runs on straight pixels, before premultiplication; deep (10/12-bit) images are
            // converted from 16 bits, before they are reduced to 8.
            if image.pointee.depth > 8, conversion.convertsDeepPixels, var buffer = try Self.convertedDeep(image, conversion) {
                buffer.convert(to: pixelFormat)
                return buffer
            }
            var buffer = try Self.rgba(image, pixelFormat: conversion.changesPixels ? .rgba8 : pixelFormat)
            conversion.apply(to: &buffer)
            buffer.convert(to: pixelFormat)
            return buffer
        }
        return try transform.apply(decoded)
    }

    /// A deep image's straight 8-bit RGBA pixels through the colour stage from libavif's 16-bit RGBA (a
    /// temporary 8 bytes per pixel); `nil` when the stage declines.
    private static func convertedDeep(_ image: UnsafeMutablePointer<avifImage>, _ conversion: ColorConversion) throws -> PixelBuffer? {
        var buffer = try PixelBuffer(width: Int(image.pointee.width), height: Int(image.pointee.height), pixelFormat: .rgba8)
        return try withDeepPixels(image) { deep, rowBytes in
            conversion.convert(rgba16: deep, bytesPerRow: rowBytes, into: &buffer) ? buffer : nil
        }
    }

    /// The 8-bit RGBA pixels of a decoded YUV image (any depth; libavif scales 10/12-bit down).
    private static func rgba(_ image: UnsafeMutablePointer<avifImage>, pixelFormat: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: Int(image.pointee.width), height: Int(image.pointee.height), pixelFormat: pixelFormat)
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.depth = 8
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.alphaPremultiplied = pixelFormat == .rgba8Premultiplied ? AVIF_TRUE : AVIF_FALSE
        rgb.rowBytes = UInt32(buffer.bytesPerRow)
        let result = buffer.withUnsafeMutableBytes { pixels -> avifResult in
            rgb.pixels = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return avifImageYUVToRGB(image, &rgb)
        }
        guard result == AVIF_RESULT_OK else {
            throw ImageCodecError.corruptData(format: .avif, message: String(cString: avifResultToString(result)))
        }
        return buffer
    }

    /// Whether a thumbnail keeps 16 bits until its conversion (`deepThumbnail(maxPixelSize:)` runs): a 10/12-bit
    /// image converted at 16 bits, without `clap`/`irot`/`imir` (those images take the 8-bit path).
    var makesDeepThumbnails: Bool { deepTemporaryByteCount > 0 && transform.isIdentity }

    /// The first frame's thumbnail through `ColorConversion.deepThumbnail` (16-bit RGBA from libavif, averaged,
    /// converted, resized), or `nil` when `makesDeepThumbnails` is false or the stage declines.
    func deepThumbnail(maxPixelSize: Int) throws -> PixelBuffer? {
        guard makesDeepThumbnails else { return nil }
        return try lock.withLock { _ -> PixelBuffer? in
            let layer = decoder.pointee.progressiveState == AVIF_PROGRESSIVE_STATE_ACTIVE ? Int(decoder.pointee.imageCount) - 1 : 0
            try Self.check(avifDecoderNthImage(decoder, UInt32(layer)), decoder)
            guard let image = decoder.pointee.image else { throw ImageCodecError.corruptData(format: .avif, message: "no image") }
            guard image.pointee.depth > 8 else { return nil }
            let (width, height) = (Int(image.pointee.width), Int(image.pointee.height))
            return try Self.withDeepPixels(image) { deep, rowBytes in
                try conversion.deepThumbnail(rgba16: deep, width: width, height: height, bytesPerRow: rowBytes,
                                             maxPixelSize: maxPixelSize)
            }
        }
    }

    /// Calls `body` with the image's straight 16-bit RGBA (libavif's `avifImageYUVToRGB` into a temporary of
    /// 8 bytes a pixel, freed after `body`) and its row stride.
    private static func withDeepPixels<T>(_ image: UnsafeMutablePointer<avifImage>,
                                          _ body: (UnsafeRawBufferPointer, Int) throws -> T) throws -> T {
        let width = Int(image.pointee.width), height = Int(image.pointee.height)
        let (rowBytes, o1) = width.multipliedReportingOverflow(by: 8)
        let (total, o2) = rowBytes.multipliedReportingOverflow(by: height)
        guard !o1, !o2 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        let deep = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 16)
        defer { deep.deallocate() }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.depth = 16
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.alphaPremultiplied = AVIF_FALSE
        rgb.rowBytes = UInt32(rowBytes)
        rgb.pixels = deep.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let result = avifImageYUVToRGB(image, &rgb)
        guard result == AVIF_RESULT_OK else {
            throw ImageCodecError.corruptData(format: .avif, message: String(cString: avifResultToString(result)))
        }
        return try body(UnsafeRawBufferPointer(deep), rowBytes)
    }

    /// Throws `limitExceeded` when libavif's parse stopped on one of the limits set from `limits` (libavif 0.11
    /// reports those as a BMFF parse failure; its diagnostic names the limit and, for the size, the declared
    /// dimensions). Returns otherwise.
    private static func limitError(_ decoder: UnsafeMutablePointer<avifDecoder>, limits: DecodeLimits) throws {
        let text = diagnostic(decoder)
        if text.contains("imageCountLimit") {
            // The count itself is not reported: parse again without the count limit (it reads only the sample
            // table, which is in the file) to give the real number.
            decoder.pointee.imageCountLimit = 0
            let count = avifDecoderParse(decoder) == AVIF_RESULT_OK ? Int(decoder.pointee.imageCount) : limits.maxFrameCount + 1
            throw ImageCodecError.limitExceeded(limit: .frameCount, actual: count, maximum: limits.maxFrameCount)
        }
        guard text.contains("too large"), let open = text.lastIndex(of: "["), let close = text.lastIndex(of: "]"),
              open < close else { return }
        let size = text[text.index(after: open)..<close].split(separator: "x").compactMap { Int($0) }
        guard size.count == 2 else { return }
        try limits.check(width: size[0], height: size[1])
        // Within our pixel limit but over libavif's dimension limit (32768 per side).
        throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: size[0] * size[1], maximum: limits.maxPixelsPerFrame)
    }

    private static func diagnostic(_ decoder: UnsafeMutablePointer<avifDecoder>) -> String {
        withUnsafeBytes(of: decoder.pointee.diag.error) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Throws the `ImageCodecError` for a libavif result (with its diagnostic text).
    static func check(_ result: avifResult, _ decoder: UnsafeMutablePointer<avifDecoder>) throws {
        guard result != AVIF_RESULT_OK else { return }
        let text = String(cString: avifResultToString(result))
        let detail = diagnostic(decoder)
        let message = detail.isEmpty ? text : "\(text): \(detail)"
        switch result {
        case AVIF_RESULT_TRUNCATED_DATA, AVIF_RESULT_WAITING_ON_IO: throw ImageCodecError.truncated(format: .avif)
        default: throw ImageCodecError.corruptData(format: .avif, message: message)
        }
    }
}
