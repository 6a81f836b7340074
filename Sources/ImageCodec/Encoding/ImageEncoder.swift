import Foundation

/// Encodes frames into a file format (YYImageEncoder's job): add frames with durations, set a loop count,
/// then `encode()`.
///
/// ```swift
/// var encoder = ImageEncoder(format: .gif, loopCount: 0)
/// encoder.addFrame(frameA, duration: 0.1)
/// encoder.addFrame(frameB, duration: 0.1)
/// let data = try encoder.encode()
/// ```
///
/// - Important: A value type; not for concurrent mutation (copy it per thread).
public struct ImageEncoder: Sendable {
    /// The output format (`.jpeg`, `.png`, `.apng`, `.gif`, `.webp`).
    public var format: ImageFormat
    /// Total plays for animated output, 0 = forever. Default 0. For GIF, written as NETSCAPE2.0
    /// repeats (`loopCount - 1`), so a round trip keeps `Image.loopCount`.
    public var loopCount: Int
    /// Quality, lossless and progressive settings.
    public var options: EncodeOptions
    /// The frames added so far, with their durations in seconds.
    public private(set) var frames: [ImageFrame] = []

    /// Makes an encoder for `format`.
    public init(format: ImageFormat, loopCount: Int = 0, options: EncodeOptions = EncodeOptions()) {
        self.format = format
        self.loopCount = loopCount
        self.options = options
    }

    /// Adds a frame shown for `duration` seconds (ignored for still formats).
    public mutating func addFrame(_ buffer: PixelBuffer, duration: Double = 0) {
        frames.append(ImageFrame(buffer: buffer, duration: duration))
    }

    /// Encodes the frames added so far with the first registered encoder of `format` that succeeds
    /// (`ImageCodecRegistry.shared`; the built-in JPEG, PNG, APNG, GIF and WebP encoders by default).
    ///
    /// - Throws: `ImageCodecError.unsupportedEncoding` for a format that cannot be written or an animation in a
    ///   still format (JPEG, PNG), `.encodingFailed` with the library's message.
    ///
    /// With `options.automaticQuality`, a still in a lossy format is encoded at the lowest quality that keeps the
    /// target score (`AutomaticQuality`: up to 4 encodes and decodes of it, 5 for AVIF, 6 for WebP and JPEG XL, scored
    /// with `SSIMULACRA2`); animations and lossless output use `options.quality` as usual.
    public func encode() throws -> Data {
        let registry = ImageCodecRegistry.shared
        if let target = options.automaticQuality,
           AutomaticQuality.applies(to: format, options: options, frameCount: frames.count) {
            let (format, loopCount, duration) = (self.format, self.loopCount, frames[0].duration)
            // WebP's tries convert RGB to YUV once (`WebPEncoder.SharpYUVSource`) when the built-in encoder is the
            // one the registry would use: the same bytes, without the conversion per try.
            let builtInWebP = format == .webp
                && registry.encoders.first { $0.canEncode(.webp, frameCount: 1) } is BuiltInEncoder
            var sharpSource: WebPEncoder.SharpYUVSource?
            return try AutomaticQuality.encode(frames[0].buffer, format: format, target: target, options: options) { buffer, options in
                if builtInWebP, !options.isLossless, options.usesSharpYUV || options.effort == .smallest {
                    do {
                        if sharpSource?.fits(buffer) != true { sharpSource = try WebPEncoder.SharpYUVSource(buffer) }
                        return try sharpSource!.encode(options: options)
                    } catch {
                        // As the registry does: past the deadline, stop; any other failure goes to the registry,
                        // which tries the next encoder of the format (review finding).
                        if case .deadlineExceeded = error as? ImageCodecError { throw error }
                    }
                }
                return try registry.encode([ImageFrame(buffer: buffer, duration: duration)], format: format, loopCount: loopCount,
                                           options: options)
            }.data
        }
        var fixed = options
        fixed.automaticQuality = nil
        return try registry.encode(frames, format: format, loopCount: loopCount, options: fixed)
    }

    /// The built-in encoders (the registry's default `BuiltInEncoder`).
    static func encodeBuiltIn(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int,
                              options: EncodeOptions) throws -> Data {
        guard !frames.isEmpty else { throw ImageCodecError.encodingFailed(format: format, message: "no frames") }
        switch format {
        case .jpeg:
            guard frames.count == 1 else { throw ImageCodecError.unsupportedEncoding(format) }
            return try JPEGEncoder.encode(frames[0].buffer, options: options)
        case .png:
            guard frames.count == 1 else { return try APNGEncoder.encode(frames, loopCount: loopCount, options: options) }
            return try PNGEncoder.encode(frames[0].buffer, options: options)
        case .apng: return try APNGEncoder.encode(frames, loopCount: loopCount, options: options)
        case .gif: return try GIFEncoder.encode(frames, loopCount: loopCount, options: options)
        case .webp:
            if frames.count == 1 { return try WebPEncoder.encode(frames[0].buffer, options: options) }
            return try WebPEncoder.encodeAnimation(frames, loopCount: loopCount, options: options)
        default: throw ImageCodecError.unsupportedEncoding(format)
        }
    }
}

extension Image {
    /// Encodes this image as `format` through `ImageCodecRegistry.shared`: every frame, duration and the loop
    /// count for formats a registered encoder writes animated (GIF, APNG, WebP built in); the first frame for
    /// still formats (and PNG).
    ///
    /// Colour: sRGB pixels (the default decode) are written without a profile, the web's default; pixels in
    /// another profile (`pixelICCProfile`, from `ColorManagement.preserve` or `.target`) are written with it
    /// in still JPEG (APP2), PNG (`iCCP`) and WebP (`ICCP`). No EXIF is written, so none can contradict them.
    ///
    /// - Parameter quality: for lossy formats, 0…1 (default 0.9).
    public func encoded(as format: ImageFormat, quality: Double = 0.9, isLossless: Bool = false) throws -> Data {
        try encoded(as: format, options: EncodeOptions(quality: quality, isLossless: isLossless))
    }

    /// Encodes this image as `format` with `options`, as `encoded(as:quality:isLossless:)` does; use it for
    /// automatic quality:
    ///
    /// ```swift
    /// let webp = try image.encoded(as: .webp, options: EncodeOptions(automaticQuality: .medium))
    /// ```
    public func encoded(as format: ImageFormat, options: EncodeOptions) throws -> Data {
        var encoder = ImageEncoder(format: format, loopCount: loopCount, options: options)
        // PNG stays a still (its first frame); `.apng` writes the animation.
        let animatedOutput = format != .png && ImageCodecRegistry.shared.canEncode(format, frameCount: 2)
        let frames = animatedOutput ? try allFrames() : [firstFrame]
        for frame in frames { encoder.addFrame(frame.buffer, duration: frame.duration) }
        let data = try encoder.encode()
        guard let profile = pixelICCProfile, frames.count == 1 else { return data }
        return ICCEmbedding.embed(profile, in: data, format: format, width: width, height: height)
    }
}
