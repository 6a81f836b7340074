import Foundation

/// Decodes JPEG data through libjpeg-turbo: baseline and progressive; grayscale, YCbCr, RGB, CMYK and YCCK
/// (Adobe inverted CMYK) all become RGB. EXIF orientation is read from APP1 and reported on the image; the
/// pixels stay as stored (`JPEGOrientation.apply` internally; the processing module exports the public transform).
///
/// `DecodeOptions.maxPixelSize` decodes a thumbnail: libjpeg's DCT-domain scaling to the smallest of 1/8, 1/4,
/// 1/2 that is still at least twice the thumbnail size (libvips' shrink-on-load margin), then `PixelBuffer.resized` (Lanczos3) to the exact size
/// (`PixelBuffer.fittingSize`). Orientation is handled as for full decodes: reported, pixels as stored (the
/// longest side is the same either way). Limits apply to the allocated buffers; see `DownsamplePlan`.
///
/// Truncated data that libjpeg can still decode ("Premature end of JPEG file") gives an image with
/// `isPartial == true`; the missing rows are libjpeg's fill. Every fatal libjpeg error gives
/// `ImageCodecError.corruptData` with libjpeg's own message.
///
/// - Important: Stateless and thread-safe.
public enum JPEGDecoder {
    /// Decodes `data` into one frame (pixel format from `options.pixelFormat`; JPEG is opaque, so both
    /// formats hold the same bytes). `options.limits` is checked after the header, before allocating.
    public static func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let decoded: (buffer: PixelBuffer, header: JPEGDecodeSession.Header, orientation: ImageOrientation?, partial: Bool,
                      colorSpace: ImageColorSpace?, color: ColorPlan)
        decoded = try data.withUnsafeBytes { bytes in
            let session = try JPEGDecodeSession(bytes: bytes)
            let header = try session.readHeader()
            let stored = session.exifPayload().flatMap(JPEGEXIF.storedOrientation(in:))
            let orientation = stored.flatMap(ImageOrientation.init(rawValue:))
            let (colorSpace, color) = colorPlan(session, header: header, options: options)
            if let plan = try DownsamplePlan.make(width: header.width, height: header.height,
                                                  maxPixelSize: options.maxPixelSize) {
                let (buffer, partial) = try decodeThumbnail(session, plan: plan, options: options, color: color)
                return (buffer, header, orientation, partial, colorSpace, color)
            }
            try options.limits.check(width: header.width, height: header.height)
            let size = try session.setScale(1, 1)
            let (buffer, partial) = try decodePixels(session, width: size.width, height: size.height,
                                                     format: options.pixelFormat, converting: color.transform)
            return (buffer, header, orientation, partial, colorSpace, color)
        }
        return Image(frames: [ImageFrame(buffer: decoded.buffer)], format: .jpeg, loopCount: 1, hasAlpha: false,
                     isProgressive: decoded.header.isProgressive, isPartial: decoded.partial,
                     orientation: decoded.orientation ?? .up,
                     originalData: options.keepsOriginalData ? data : nil,
                     colorSpace: decoded.colorSpace, pixelICCProfile: decoded.color.pixelICCProfile)
    }

    /// The file's colour description (APP2 ICC profile) and what the colour stage will do with it; CMYK is
    /// decoded as raw inks when a transform will convert them (the profile-less formula otherwise).
    static func colorPlan(_ session: JPEGDecodeSession, header: JPEGDecodeSession.Header,
                          options: DecodeOptions) -> (ImageColorSpace?, ColorPlan) {
        let colorSpace = session.iccProfile().map { ImageColorSpace(iccProfile: $0) }
        // Without a profile, CMYK keeps today's formula; a grey or RGB image is sRGB.
        let plan = ColorStage.plan(colorSpace: colorSpace, layout: header.colorLayout, management: options.colorManagement)
        if header.isCMYK { session.setRawCMYK(plan.transform != nil) }
        return (colorSpace, plan)
    }

    /// The colour description and plan of a whole JPEG (a session of its own), for decoders that did not use
    /// `decode` (the incremental stream).
    static func colorPlan(of data: Data, options: DecodeOptions) throws -> (ImageColorSpace?, ColorPlan) {
        try data.withUnsafeBytes { bytes in
            let session = try JPEGDecodeSession(bytes: bytes)
            return colorPlan(session, header: try session.readHeader(), options: options)
        }
    }

    /// Decodes every row of `session` (scale already set) into a new `width × height` buffer, converting its
    /// colour with `transform` when given. A large image is converted band by band on a helper thread while
    /// libjpeg decodes the next band (`ColorBandPipeline`; `pipelinesColor` false converts after the decode, on
    /// this thread, as small images are): the same pixels either way.
    static func decodePixels(_ session: JPEGDecodeSession, width: Int, height: Int, format: PixelBuffer.PixelFormat,
                             converting transform: ColorTransform? = nil,
                             pipelinesColor: Bool = true) throws -> (PixelBuffer, partial: Bool) {
        // Not zeroed: libjpeg writes every row (the shim clears any row it could not produce).
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: format, zeroed: false)
        let stride = buffer.bytesPerRow
        guard let transform, pipelinesColor, ColorBandPipeline.isWorthwhile(width: width, height: height) else {
            let outcome = try buffer.withUnsafeMutableBytes { try session.decode(into: $0.baseAddress!, bytesPerRow: stride) }
            // JPEG pixels are opaque: premultiplied or not, they are what the transform expects.
            transform?.apply(to: &buffer)
            return (buffer, outcome.isPrematureEnd)
        }
        // Every band is converted (or, after a throw, waited for) before the buffer's pointer goes out of scope.
        let outcome = try buffer.withUnsafeMutableBytes { bytes in
            try ColorBandPipeline.run(transform, pixels: bytes.baseAddress!, width: width, bytesPerRow: stride) { bandFinished in
                try session.decode(into: bytes.baseAddress!, bytesPerRow: stride, height: height,
                                   bandRows: ColorBandPipeline.bandRows(width: width), bandFinished: bandFinished)
            }
        }
        return (buffer, outcome.isPrematureEnd)
    }

    /// Reads header facts (size, progressive, EXIF orientation) without decoding pixels.
    public static func info(_ data: Data) throws -> ImageInfo {
        try data.withUnsafeBytes { bytes in
            let session = try JPEGDecodeSession(bytes: bytes)
            let header = try session.readHeader()
            let stored = session.exifPayload().flatMap(JPEGEXIF.storedOrientation(in:))
            return ImageInfo(format: .jpeg, width: header.width, height: header.height, hasAlpha: false,
                             isProgressive: header.isProgressive,
                             orientation: stored.flatMap(ImageOrientation.init(rawValue:)) ?? .up,
                             hasOrientationTag: stored != nil)
        }
    }
}

