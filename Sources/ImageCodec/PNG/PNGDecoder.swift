import Foundation

/// Decodes PNG data through libpng: every colour type and bit depth, tRNS, Adam7; 16-bit channels are
/// scaled (rounded) to 8 bits. libpng's default checks apply: a CRC error in a critical chunk is an error, in
/// an ancillary chunk a warning.
///
/// `DecodeOptions.maxPixelSize` decodes a thumbnail without a full-size buffer, and the limits apply to
/// what is allocated (plus `DownsamplePlan`'s work cap on the source): a non-interlaced PNG is read row by row
/// into a `RowResampler` (Lanczos3); an Adam7 PNG's rows are only final after the last pass, so each pass's
/// pixels are averaged as they arrive into a `BoxAccumulator` (integer-factor boxes, at least the thumbnail
/// size), which is then resized exactly (Lanczos3): close to, not bit-identical with, a full decode + resize.
///
/// - Important: Stateless and thread-safe.
public enum PNGDecoder {
    /// Decodes `data` into one frame. `options.limits` is checked from IHDR before allocating.
    ///
    /// Colour: `iCCP` (grey profiles for grey images), `sRGB`, `cICP`, `gAMA` + `cHRM` go to the colour stage
    /// (`ColorManagement`), which converts the straight pixels before premultiplication.
    public static func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let colorSpace = data.withUnsafeBytes { PNGColorChunks.read($0) }
        let (buffer, header, color) = try data.withUnsafeBytes { bytes in
            let session = try PNGDecodeSession(bytes: bytes, format: .png)
            let header = try session.readInfo()
            let color = ColorStage.plan(colorSpace: colorSpace, layout: colorLayout(colorType: header.colorType),
                                        management: options.colorManagement)
            // 16-bit sources are converted at 16 bits, then reduced to 8 (full-size decodes of RGB transforms).
            var deep: ColorPlan?
            if header.bitDepth == 16, options.maxPixelSize == nil, color.transform?.layout == .rgba {
                deep = ColorStage.plan(colorSpace: colorSpace, layout: .rgba16, management: options.colorManagement)
            }
            if let deep, let transform = deep.transform, transform.layout == .rgba16 {
                return (try decodeDeep(session, header: header, transform: transform, options: options), header, color)
            }
            return (try decodeBuffer(session, header: header, options: options, color: color), header, color)
        }
        return Image(frames: [ImageFrame(buffer: buffer)], format: .png, loopCount: 1, hasAlpha: header.hasAlpha,
                     isProgressive: header.isInterlaced, originalData: options.keepsOriginalData ? data : nil,
                     colorSpace: colorSpace, pixelICCProfile: color.pixelICCProfile)
    }

    /// A 16-bit PNG decoded at 16 bits (a temporary 8 bytes per pixel) and converted by `transform` into straight
    /// 8-bit pixels, then put in `options.pixelFormat`. Limits were checked for the 8-bit image; the temporary is
    /// twice its size.
    static func decodeDeep(_ session: PNGDecodeSession, header: PNGDecodeSession.Header, transform: ColorTransform,
                           options: DecodeOptions) throws -> PixelBuffer {
        try options.limits.check(width: header.width, height: header.height)
        let (rowBytes, o1) = header.width.multipliedReportingOverflow(by: 8)
        let (total, o2) = rowBytes.multipliedReportingOverflow(by: header.height)
        guard !o1, !o2 else { throw ImageCodecError.invalidDimensions(width: header.width, height: header.height) }
        guard let deep = malloc(max(total, 1)) else { throw ImageCodecError.allocationFailed(byteCount: total) }
        defer { free(deep) }
        try session.decode16(into: deep, bytesPerRow: rowBytes)
        var buffer = try PixelBuffer(width: header.width, height: header.height, pixelFormat: .rgba8, zeroed: false)
        transform.apply(rgba16: UnsafeRawBufferPointer(start: deep, count: total), bytesPerRow: rowBytes, into: &buffer)
        buffer.convert(to: options.pixelFormat)
        return buffer
    }

    /// How decoded pixels of a PNG colour type hold their colour: grey types (0, 4) are grey expanded to RGBA.
    static func colorLayout(colorType: Int) -> ColorLayout { colorType & 2 == 0 ? .greyInRGBA : .rgba }

    /// Reads IHDR facts (and tRNS) without decoding pixels.
    public static func info(_ data: Data) throws -> ImageInfo {
        let header = try data.withUnsafeBytes { try PNGDecodeSession(bytes: $0).readInfo() }
        return ImageInfo(format: .png, width: header.width, height: header.height, hasAlpha: header.hasAlpha,
                         isProgressive: header.isInterlaced)
    }

    /// Decodes a whole PNG stream (also the standalone frames APNG rebuilds) into a new buffer.
    static func decodeBuffer(_ data: Data, format: ImageFormat, options: DecodeOptions)
        throws -> (PixelBuffer, PNGDecodeSession.Header) {
        try data.withUnsafeBytes { try decodeBuffer($0, format: format, options: options) }
    }

    /// Decodes the PNG stream at `bytes` into a new buffer in `options.pixelFormat`.
    static func decodeBuffer(_ bytes: UnsafeRawBufferPointer, format: ImageFormat, options: DecodeOptions)
        throws -> (PixelBuffer, PNGDecodeSession.Header) {
        let session = try PNGDecodeSession(bytes: bytes, format: format)
        let header = try session.readInfo()
        return (try decodeBuffer(session, header: header, options: options, color: .none), header)
    }

    /// Decodes the pixels of a session whose header was read; a colour transform runs on straight pixels,
    /// which are then premultiplied when `options.pixelFormat` asks for it.
    /// `pipelinesColor` false converts a large image after its decode, on this thread (tests compare the two).
    static func decodeBuffer(_ session: PNGDecodeSession, header: PNGDecodeSession.Header, options: DecodeOptions,
                             color: ColorPlan, pipelinesColor: Bool = true) throws -> PixelBuffer {
        let format: PixelBuffer.PixelFormat = color.transform == nil ? options.pixelFormat : .rgba8
        if let plan = try DownsamplePlan.make(width: header.width, height: header.height,
                                              maxPixelSize: options.maxPixelSize) {
            var buffer = try decodeThumbnail(session, header: header, plan: plan, options: options, format: format)
            color.apply(to: &buffer)
            buffer.convert(to: options.pixelFormat)
            return buffer
        }
        try options.limits.check(width: header.width, height: header.height)
        // Not zeroed: libpng writes every pixel (all rows; Adam7's seven passes cover every pixel once).
        var buffer = try PixelBuffer(width: header.width, height: header.height, pixelFormat: format, zeroed: false)
        let stride = buffer.bytesPerRow
        if let transform = color.transform, pipelinesColor, !header.isInterlaced,
           ColorBandPipeline.isWorthwhile(width: header.width, height: header.height) {
            // Rows are final as libpng writes them (not interlaced): each band is converted on a helper while the
            // next is decoded (`ColorBandPipeline`); the same rows as `session.decode` (straight, same transforms).
            try buffer.withUnsafeMutableBytes { bytes in
                try decodeRows(session, header: header, into: bytes.baseAddress!, bytesPerRow: stride, transform: transform)
            }
        } else {
            try buffer.withUnsafeMutableBytes {
                try session.decode(into: $0.baseAddress!, bytesPerRow: stride, premultiply: format == .rgba8Premultiplied)
            }
            color.apply(to: &buffer)
        }
        buffer.convert(to: options.pixelFormat)
        return buffer
    }

    /// Decodes a non-interlaced PNG's rows into `pixels` through a `ColorBandPipeline` that converts them with
    /// `transform`; every band is converted (or, after a throw, waited for) before this returns.
    private static func decodeRows(_ session: PNGDecodeSession, header: PNGDecodeSession.Header,
                                   into pixels: UnsafeMutableRawPointer, bytesPerRow: Int,
                                   transform: ColorTransform) throws {
        try ColorBandPipeline.run(transform, pixels: pixels, width: header.width, bytesPerRow: bytesPerRow) { bandFinished in
            guard try session.startRows() == 1 else {
                throw ImageCodecError.corruptData(format: .png, message: "unexpected interlace passes")
            }
            let bandRows = ColorBandPipeline.bandRows(width: header.width)
            var bandStart = 0
            for y in 0..<header.height {
                try session.readRow(into: pixels + y * bytesPerRow)
                if y + 1 - bandStart == bandRows || y + 1 == header.height {
                    bandFinished(bandStart..<(y + 1))
                    bandStart = y + 1
                }
            }
            try session.finishRows()
        }
    }
}
