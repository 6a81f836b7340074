internal import CWebImageHEIF
import Foundation
import ImageCodec

/// Decodes the primary image of HEIF/HEIC files through libheif (see `HEIFCodec`).
///
/// Wraps `heif_context_read_from_memory_without_copy`, `heif_context_get_primary_image_handle`,
/// `heif_decode_image` and `heif_image_get_plane_readonly`.
///
/// - Important: Stateless and thread-safe; decoding runs on the calling thread.
public struct HEIFDecoder: ImageDecoding {
    /// Makes the decoder.
    public init() {}

    /// The codec's name in errors and logs.
    public var name: String { "libheif" }
    /// The formats this codec handles (`ImageCodecRegistry` matches on the sniffed format).
    public var formats: [ImageFormat] { [.heif] }
    /// What this codec can do: stills, animations, incremental data.
    public var capabilities: ImageCodecCapabilities { .still }
    /// MIME types the manager adds to its `Accept` header while this codec is registered.
    public var mimeTypes: [String] { ["image/heic", "image/heif"] }

    /// Decodes the primary image.
    ///
    /// - Throws: `ImageCodecError.limitExceeded` (libheif's security limit, or the declared size, before
    ///   decoding: the primary image's, every grid's or overlay's canvas, every coded image's HEVC or AV1
    ///   size, and those sizes times the decodes one item starts against `maxTotalPixels`), `.truncated`,
    ///   `.corruptData` with libheif's message or for item references that loop or nest past
    ///   `maximumReferenceDepth` / `maximumReferencedDecodes`, or a grid tile or overlay layer with its own alpha image
    ///   (checked before libheif reads the file), `.allocationFailed`.
    public func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let management = options.colorManagement
        let isThumbnail = (options.maxPixelSize ?? 0) > 0
        var (buffer, hasAlpha, colorSpace, isConverted) = try Self.withPrimaryImage(data, limits: options.limits,
                                                                                     decoding: true) { handle, limits in
            let colorSpace = Self.colorSpace(of: handle)
            let conversion = ColorConversion(colorSpace: colorSpace, management: management)
            let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
            // Deep (10/12-bit) images are converted from 16 bits, before they are reduced to 8. A thumbnail keeps
            // 16 bits too, but is averaged to twice its size first and converted there, then resized
            // (`ColorConversion.deepThumbnail`): the transform runs on a small image.
            if Self.convertsAtSixteenBits(handle, conversion: conversion, hasAlpha: hasAlpha) {
                let converted = try Self.withDeepPlane(handle, limits: limits) { plane, width, height, stride -> PixelBuffer? in
                    if isThumbnail {
                        return try conversion.deepThumbnail(rgba16: plane, width: width, height: height, bytesPerRow: stride,
                                                            maxPixelSize: options.maxPixelSize ?? 0)
                    }
                    var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
                    return conversion.convert(rgba16: plane, bytesPerRow: stride, into: &buffer) ? buffer : nil
                }
                if let converted { return (converted, hasAlpha, colorSpace, true) }
            }
            let (buffer, alpha) = try Self.decodePixels(handle, limits: limits)
            return (buffer, alpha, colorSpace, false)
        }
        // The colour stage (ICC or CICP from `colr`; PQ/HLG tone-mapped) on straight pixels, then the pixel format.
        // It is per pixel: a thumbnail is resized first (straight in, straight out) and converted at its own size.
        let conversion = ColorConversion(colorSpace: colorSpace, management: options.colorManagement)
        if !isConverted, conversion.changesPixels, let size = options.maxPixelSize, size > 0 {
            buffer = try buffer.resized(maxPixelSize: size)
        }
        if !isConverted { conversion.apply(to: &buffer) }
        buffer.convert(to: options.pixelFormat)  // in place: the buffer is not shared
        let image = Image(frames: [ImageFrame(buffer: buffer)], format: .heif, loopCount: 1,
                          hasAlpha: hasAlpha, originalData: options.keepsOriginalData ? data : nil,
                          colorSpace: colorSpace, pixelICCProfile: conversion.pixelICCProfile)
        return try image.stillThumbnail(maxPixelSize: options.maxPixelSize)
    }

    /// The primary image's declared size (after its transforms) and alpha; no pixels are decoded.
    ///
    /// - Throws: `ImageCodecError.corruptData` with libheif's message, or for item references that loop or
    ///   nest too deep, or more deflate-compressed metadata than libheif may inflate (checked before libheif
    ///   reads the file); `.limitExceeded` for libheif's security limit.
    public func info(_ data: Data) throws -> ImageInfo {
        try Self.withPrimaryImage(data, limits: .default, decoding: false) { handle, _ in
            ImageInfo(format: .heif, width: Int(heif_image_handle_get_width(handle)),
                      height: Int(heif_image_handle_get_height(handle)),
                      hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0)
        }
    }

    /// Whether a full-size decode of `handle` takes the deep path (`decodeDeepPixels`): a 10/12-bit image with
    /// straight (or no) alpha whose colour `conversion` converts at 16 bits.
    static func convertsAtSixteenBits(_ handle: OpaquePointer, conversion: ColorConversion, hasAlpha: Bool) -> Bool {
        conversion.convertsDeepPixels && heif_image_handle_get_luma_bits_per_pixel(handle) > 8
            && (!hasAlpha || heif_image_handle_is_premultiplied_alpha(handle) == 0)
    }

    /// The longest chain of nested decodes a file may start (a grid's tile, an identity item's source, an
    /// alpha image): 16. libheif 1.15 recurses once per level and checks neither depth nor loops.
    public static let maximumReferenceDepth = 16

    /// The most decodes one file may start through its item references: 1 << 17 (a 256 × 256 grid has
    /// 65,537). Grids of grids multiply them: eight levels of 8-tile grids would be 8^8 decodes.
    public static let maximumReferencedDecodes = 1 << 17

    /// Reads `data` (libheif's size limit set first) and calls `body` with the primary image's handle.
    /// `decoding`: `body` decodes, so the derived images' canvases and tiles are checked first.
    private static func withPrimaryImage<T>(_ data: Data, limits: DecodeLimits, decoding: Bool,
                                            _ body: (OpaquePointer, DecodeLimits) throws -> T) throws -> T {
        // Before libheif: item references that loop would overflow its stack (see `HEIFItemReferences`).
        let references = HEIFItemReferences(data)
        let decodes = try references.check(maximumDepth: maximumReferenceDepth, maximumDecodes: maximumReferencedDecodes)
        // Metadata libheif would inflate without bound while reading; when decoding, coded sizes and
        // canvases it would allocate past the limits, decodes repeated past them, tiles and layers whose
        // alpha it would paste or blend out of bounds (see `HEIFImageItems`).
        let imageItems = HEIFImageItems(data)
        try imageItems.checkMetadata()
        try imageItems.checkReferenceScans(references)
        if decoding {
            try imageItems.check(limits: limits)
            try imageItems.checkWork(references, decodes: decodes, limits: limits)
            try imageItems.checkLayerAlpha(references)
        }
        guard let context = heif_context_alloc() else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        defer { heif_context_free(context) }
        // Before reading: libheif refuses larger sides (and their product) while parsing. Its default is
        // 32768 per side; a side longer than maxPixelsPerFrame cannot fit either.
        heif_context_set_maximum_image_size_limit(context, Int32(clamping: min(limits.maxPixelsPerFrame, 32768)))
        heif_context_set_max_decoding_threads(context, 0)
        return try data.withUnsafeBytes { raw in
            // The context reads the bytes in place; it is freed before they go away (the defer above runs
            // after this closure returns).
            do {
                try check(heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil), limits: limits)
            } catch ImageCodecError.corruptData(format: .heif, _) where BoxReader(bytes: raw).endsInsideATopLevelBox {
                // libheif 1.15 cannot read a box cut short and says so as invalid input ("No 'meta' box"): when the
                // data ends inside a top-level box, the file was cut, not corrupt.
                throw ImageCodecError.truncated(format: .heif)
            }
            var handle: OpaquePointer?
            try check(heif_context_get_primary_image_handle(context, &handle), limits: limits)
            guard let handle else { throw ImageCodecError.corruptData(format: .heif, message: "no primary image") }
            defer { heif_image_handle_release(handle) }
            return try body(handle, limits)
        }
    }

    /// Decodes the primary image to RGBA8 (straight, or premultiplied when the file says so), checking the declared size first and sizing the buffer
    /// from the decoded image.
    private static func decodePixels(_ handle: OpaquePointer, limits: DecodeLimits) throws -> (PixelBuffer, Bool) {
        try limits.check(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        guard let options = heif_decoding_options_alloc() else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        defer { heif_decoding_options_free(options) }
        options.pointee.convert_hdr_to_8bit = 1
        var decoded: OpaquePointer?
        try check(heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options), limits: limits)
        guard let decoded else { throw ImageCodecError.corruptData(format: .heif, message: "no decoded image") }
        defer { heif_image_release(decoded) }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        try limits.check(width: width, height: height)
        var stride: Int32 = 0
        guard heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved) == 8,
              let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
              Int(stride) >= width * 4 else {
            throw ImageCodecError.corruptData(format: .heif, message: "no 8-bit RGBA plane")
        }
        // libheif 1.15 hands the planes back as stored: with a `prem` reference (ISO/IEC 23008-12 6.6.1) the
        // colour is already multiplied by alpha, and labelling it straight would premultiply it a second time
        // for display (and give premultiplied values to a caller asking for straight RGBA).
        let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
        let isPremultiplied = hasAlpha && heif_image_handle_is_premultiplied_alpha(handle) != 0
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: isPremultiplied ? .rgba8Premultiplied : .rgba8)
        let rowBytes = width * 4, bytesPerRow = buffer.bytesPerRow
        buffer.withUnsafeMutableBytes { out in
            for y in 0..<height {
                (out.baseAddress! + y * bytesPerRow).copyMemory(from: plane + y * Int(stride), byteCount: rowBytes)
            }
        }
        return (buffer, hasAlpha)
    }

    /// The primary image's `colr` boxes: the ICC profile (`prof`/`rICC`, at most 4 MiB read) and the `nclx` CICP
    /// code points; `nil` when it has neither. Wraps `heif_image_handle_get_raw_color_profile` and
    /// `heif_image_handle_get_nclx_color_profile`.
    static func colorSpace(of handle: OpaquePointer) -> ImageColorSpace? {
        var colorSpace = ImageColorSpace()
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        if size > 0, size <= 4 << 20 {
            var profile = Data(count: size)
            let error = profile.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
            if error.code == heif_error_Ok { colorSpace.iccProfile = profile }
        }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        if heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx {
            let n = nclx.pointee
            colorSpace.cicp = ImageColorSpace.CICP(colorPrimaries: UInt8(clamping: n.color_primaries.rawValue),
                                                   transferCharacteristics: UInt8(clamping: n.transfer_characteristics.rawValue),
                                                   matrixCoefficients: UInt8(clamping: n.matrix_coefficients.rawValue),
                                                   isFullRange: n.full_range_flag != 0)
            heif_nclx_color_profile_free(nclx)
        }
        return colorSpace.isEmpty ? nil : colorSpace
    }

    /// Decodes a deep image at its own depth (`heif_chroma_interleaved_RRGGBBAA_LE`: libheif's plane of 8 bytes
    /// a pixel is the 16-bit temporary, rescaled to native 16-bit full range in place) and calls `body` with the
    /// plane, its size and stride; `nil` when libheif does not give such a plane (the 8-bit path then runs).
    private static func withDeepPlane<T>(_ handle: OpaquePointer, limits: DecodeLimits,
                                         _ body: (UnsafeRawBufferPointer, Int, Int, Int) throws -> T?) throws -> T? {
        try limits.check(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        guard let options = heif_decoding_options_alloc() else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        defer { heif_decoding_options_free(options) }
        options.pointee.convert_hdr_to_8bit = 0
        var decoded: OpaquePointer?
        try check(heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_interleaved_RRGGBBAA_LE, options),
                  limits: limits)
        guard let decoded else { throw ImageCodecError.corruptData(format: .heif, message: "no decoded image") }
        defer { heif_image_release(decoded) }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        try limits.check(width: width, height: height)
        let bits = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved))
        var stride: Int32 = 0
        // The decoded image is ours (released above): its plane is rescaled where it is, not copied (a copy was a
        // second 8 bytes a pixel, held beside libheif's).
        guard (9...16).contains(bits), let plane = heif_image_get_plane(decoded, heif_channel_interleaved, &stride),
              Int(stride) >= width * 8, Int(stride) % 2 == 0 else { return nil }
        let (total, overflow) = Int(stride).multipliedReportingOverflow(by: height)
        guard !overflow else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        // Little-endian samples of `bits` bits → native 16-bit full range (the top bits repeated below).
        let (up, down) = (16 - bits, max(0, 2 * bits - 16))
        let raw = UnsafeMutableRawPointer(plane)
        for y in 0..<height {
            let row = (raw + y * Int(stride)).assumingMemoryBound(to: UInt16.self)
            for i in 0..<(width * 4) {
                let v = UInt16(littleEndian: row[i])
                row[i] = up == 0 ? v : (v << up) | (v >> down)
            }
        }
        return try body(UnsafeRawBufferPointer(start: raw, count: total), width, height, Int(stride))
    }

    /// Bytes a pixel libheif holds for a 10/12-bit image decoded at 16 bits (`withDeepPlane`): 14, its interleaved
    /// 16-bit RGBA plane (8) and one planar 16-bit RGB image of its colour conversion (6) alive with it at the peak.
    /// Measured (DeepColorDecodeBudgetTests, 1500² 4:2:0): the deep decode's peak is about 10 bytes a pixel above
    /// the same image's 8-bit decode, whose own 8-bit plane (4) it replaces.
    public static let deepTemporaryBytesPerPixel = 14

    /// The 16-bit temporaries of a decode that converts a 10/12-bit image at 16 bits: libheif's
    /// (`deepTemporaryBytesPerPixel`), and for a thumbnail also the grid it is shrunk to
    /// (`ColorConversion.deepThumbnailWorkingByteCount`); 0 for 8-bit images, `.preserve`, untagged and sRGB
    /// sources. Reads the file's boxes (libheif's parse, no pixels).
    public func colorTemporaryByteCount(of data: Data, options: DecodeOptions) -> Int {
        guard options.colorManagement != .preserve else { return 0 }
        let maxPixelSize = options.maxPixelSize ?? 0
        let management = options.colorManagement
        let count = try? Self.withPrimaryImage(data, limits: options.limits, decoding: false) { handle, _ -> Int in
            let conversion = ColorConversion(colorSpace: Self.colorSpace(of: handle), management: management)
            let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
            guard Self.convertsAtSixteenBits(handle, conversion: conversion, hasAlpha: hasAlpha) else { return 0 }
            let (width, height) = (Int(heif_image_handle_get_width(handle)), Int(heif_image_handle_get_height(handle)))
            let (pixels, o1) = width.multipliedReportingOverflow(by: height)
            let (bytes, o2) = pixels.multipliedReportingOverflow(by: Self.deepTemporaryBytesPerPixel)
            guard !o1, !o2 else { return .max }
            guard maxPixelSize > 0 else { return bytes }
            let grid = ColorConversion.deepThumbnailWorkingByteCount(width: width, height: height, maxPixelSize: maxPixelSize)
            let (sum, o3) = bytes.addingReportingOverflow(grid)
            return o3 ? .max : sum
        }
        return count ?? 0
    }

    /// Throws the `ImageCodecError` for a libheif error, keeping its message.
    private static func check(_ error: heif_error, limits: DecodeLimits) throws {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)/\(error.subcode.rawValue)"
        if error.subcode == heif_suberror_Security_limit_exceeded {
            // "… 40000x40000 exceeds the maximum image size 32768x32768": the first size is the image's.
            if let range = message.range(of: #"\d+x\d+"#, options: .regularExpression) {
                let size = message[range].split(separator: "x").compactMap { Int($0) }
                if size.count == 2 {
                    let (pixels, overflow) = size[0].multipliedReportingOverflow(by: size[1])
                    throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: overflow ? .max : pixels,
                                                        maximum: limits.maxPixelsPerFrame)
                }
            }
            throw ImageCodecError.corruptData(format: .heif, message: message)
        }
        if error.code == heif_error_Memory_allocation_error { throw ImageCodecError.allocationFailed(byteCount: 0) }
        if error.subcode == heif_suberror_End_of_data { throw ImageCodecError.truncated(format: .heif) }
        throw ImageCodecError.corruptData(format: .heif, message: message)
    }
}
