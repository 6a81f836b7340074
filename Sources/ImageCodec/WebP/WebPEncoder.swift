internal import CWebImageWebP
import Foundation

/// Encodes WebP through libwebp: still images with `WebPEncode`, animations with `WebPAnimEncoder`.
///
/// - Lossy by default, `EncodeOptions.quality` 0…1 mapped to libwebp's 0…100 (alpha is kept losslessly, except in
///   automatic quality's scored search: `EncodeOptions.quantisesAlpha`), with
///   `EncodeOptions.effort`'s method (2, 4 or 6; sharp RGB→YUV at `.smallest`);
///   `isLossless` writes VP8L with `exact` set, so every pixel, including the colour of transparent ones,
///   survives a round trip.
/// - Input may be premultiplied or straight; it is converted to straight alpha for the encoder.
/// - Animations: durations become millisecond timestamps; `loopCount` is written as the ANIM loop count
///   (total plays, 0 = forever). libwebp may merge a frame identical to the previous one into it (its
///   duration is added), so such an animation decodes with fewer frames.
///
/// - `EncodeOptions.deadline`: a still stops within libwebp's progress hook (`WebPPicture.progress_hook`), an
///   animation between frames.
///
/// - Important: Stateless and thread-safe.
public enum WebPEncoder {
    /// Encodes one buffer.
    ///
    /// - Throws: `ImageCodecError.encodingFailed` with libwebp's error.
    public static func encode(_ buffer: PixelBuffer, options: EncodeOptions) throws -> Data {
        var config = try makeConfig(options, hasAlpha: !buffer.isOpaque)
        var picture = try makePicture(buffer)
        defer { WebPPictureFree(&picture) }
        return try encode(&picture, config: &config, options: options)
    }

    /// Runs `WebPEncode` on `picture` (ARGB, or YUVA already converted) into memory, with `options.deadline` as
    /// libwebp's progress hook.
    static func encode(_ picture: inout WebPPicture, config: inout WebPConfig, options: EncodeOptions) throws -> Data {
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        try options.checkDeadline(.webp)
        var deadline = options.deadline
        let ok = withUnsafeMutablePointer(to: &writer) { writerPointer -> Int32 in
            withUnsafeMutablePointer(to: &deadline) { deadlinePointer -> Int32 in
                picture.writer = WebPMemoryWrite
                picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
                if options.deadline != nil {
                    // libwebp calls the hook as its passes progress; a 0 aborts with VP8_ENC_ERROR_USER_ABORT.
                    picture.user_data = UnsafeMutableRawPointer(deadlinePointer)
                    picture.progress_hook = { _, picture in
                        guard let instant = picture?.pointee.user_data?
                            .assumingMemoryBound(to: ContinuousClock.Instant?.self).pointee else { return 1 }
                        return ContinuousClock.now < instant ? 1 : 0
                    }
                }
                let ok = WebPEncode(&config, &picture)
                // The picture may be encoded again (`SharpYUVSource`): no pointer into this frame outlives it.
                picture.writer = nil
                picture.custom_ptr = nil
                picture.progress_hook = nil
                picture.user_data = nil
                return ok
            }
        }
        if ok == 0, picture.error_code == VP8_ENC_ERROR_USER_ABORT { throw ImageCodecError.deadlineExceeded(format: .webp) }
        guard ok != 0, let mem = writer.mem else {
            throw ImageCodecError.encodingFailed(format: .webp, message: message(picture.error_code))
        }
        return Data(bytes: mem, count: writer.size)
    }

    /// Encodes an animation of `frames` (all the size of the first). Wraps `WebPAnimEncoderAdd` and
    /// `WebPAnimEncoderAssemble`.
    ///
    /// - Throws: `ImageCodecError.encodingFailed` for frames of different sizes or libwebp's error.
    public static func encodeAnimation(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions) throws -> Data {
        guard let first = frames.first else { throw ImageCodecError.encodingFailed(format: .webp, message: "no frames") }
        let (width, height) = (first.buffer.width, first.buffer.height)
        guard frames.allSatisfy({ $0.buffer.width == width && $0.buffer.height == height }) else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "every frame must be \(width)×\(height)")
        }
        var config = try makeConfig(options, hasAlpha: frames.contains { !$0.buffer.isOpaque })
        var animOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&animOptions) != 0 else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "libwebp version mismatch")
        }
        animOptions.anim_params.loop_count = Int32(max(0, min(loopCount, 65535)))
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &animOptions) else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "WebPAnimEncoderNew failed for \(width)×\(height)")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        func failure() -> ImageCodecError {
            let text = WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "unknown error"
            return .encodingFailed(format: .webp, message: text)
        }
        var timestamp = 0
        for frame in frames {
            // WebPAnimEncoder makes its own pictures (no hook of ours reaches them): the deadline is checked per frame.
            try options.checkDeadline(.webp)
            var picture = try makePicture(frame.buffer)
            defer { WebPPictureFree(&picture) }
            guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else { throw failure() }
            // A WebP frame lasts at most 0xFFFFFF ms (ANMF's 24-bit field; libwebp refused longer ones).
            timestamp += min(0xFF_FFFF, max(1, Int((frame.duration * 1000).rounded())))
        }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0 else { throw failure() }
        var output = WebPData()
        guard WebPAnimEncoderAssemble(encoder, &output) != 0, let bytes = output.bytes else { throw failure() }
        defer { WebPDataClear(&output) }
        return Data(bytes: bytes, count: output.size)
    }

    /// Method 6 with sharp YUV for `.smallest` lossy output, but 5 when the picture has alpha: at method 6 libwebp
    /// compresses a lossless alpha plane with its slowest settings (`alpha_quality` 100 turns on its "cruncher"),
    /// measured by cwebp at 400 px: chartjs_overlapping 5.8 s at method 6 against 0.07 s at method 5 (8 % larger),
    /// 16.4 s for the corpus's 67 thumbnails against 1.4 s at method 4.
    static let smallestMethodWithAlpha: Int32 = 5

    /// Spatial noise shaping for automatic quality's scored WebP of `pixelCount` pixels: libwebp's photo preset's
    /// 80 from `largeOutputPixels` up, libwebp's 50 under it. At equal SSIMULACRA2, 80 moves bits from textures
    /// into flat areas: 0.98× the bytes at 1200 px wide, but 1.01× at 400×300, where a 16×16 macroblock holds a
    /// large part of the picture (docs/quality.md, "WebP at equal score: alpha and noise shaping").
    static func scoredNoiseShaping(pixelCount: Int) -> Int32 {
        pixelCount >= largeOutputPixels ? 80 : 50
    }

    /// The output size from which `scoredNoiseShaping(pixelCount:)` takes 80: at equal score, 80 wrote 1.010× the
    /// bytes of 50 at 120,000 pixels (400×300), 1.000× at a median of 232,500 (600 px wide), 0.991× at 413,600
    /// (800 px) and 0.983× at 929,400 (1200 px), on the opaque corpus files with an ideal resize and search.
    static let largeOutputPixels = 250_000

    /// The lowest alpha quality a quantised WebP alpha plane gets (`EncodeOptions.quantisesAlpha`): libwebp
    /// quantises the alpha plane to 2 + quality / 5 levels up to quality 70 (16 + 8 a quality above), so 70 keeps
    /// 16. When automatic quality scored on the metric's mid grey alone, 12 levels (50) let a soft shadow reach 70
    /// on grey and 68.0 on white, where an alpha error has twice the contrast. It now scores black and white too
    /// (`ScoringReference`); the floor keeps a margin for the backgrounds it does not score.
    static let minimumQuantisedAlphaQuality: Int32 = 70

    static func makeConfig(_ options: EncodeOptions, hasAlpha: Bool) throws -> WebPConfig {
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "libwebp version mismatch")
        }
        config.quality = Float(max(0, min(1, options.quality)) * 100)
        // `EncodeEffort` for lossy output: method 2 / 4 (libwebp's default) / 6 with sharp RGB→YUV (docs/quality.md,
        // "Tuned encoders"; 5 with alpha, `smallestMethodWithAlpha`). Lossless keeps libwebp's defaults: its method 6 is many times slower for little gain.
        if !options.isLossless {
            switch options.effort {
            case .fast: config.method = 2
            case .balanced: config.method = 4
            case .smallest:
                config.method = hasAlpha ? smallestMethodWithAlpha : 6
                config.use_sharp_yuv = 1
            }
            if options.usesSharpYUV { config.use_sharp_yuv = 1 }
            if let shaping = options.webPNoiseShaping { config.sns_strength = max(0, min(100, shaping)) }
            if options.quantisesAlpha {
                config.alpha_quality = max(minimumQuantisedAlphaQuality, Int32(config.quality.rounded()))
            }
        }
        if options.isLossless {
            config.lossless = 1
            config.exact = 1
        }
        guard WebPValidateConfig(&config) != 0 else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "invalid configuration")
        }
        return config
    }

    /// A picture holding straight-alpha ARGB copied from `buffer` (`WebPPictureImportRGBA`).
    static func makePicture(_ buffer: PixelBuffer) throws -> WebPPicture {
        guard buffer.width <= Int(WEBP_MAX_DIMENSION), buffer.height <= Int(WEBP_MAX_DIMENSION) else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "WebP images are at most 16383×16383")
        }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else {
            throw ImageCodecError.encodingFailed(format: .webp, message: "libwebp version mismatch")
        }
        picture.use_argb = 1
        picture.width = Int32(buffer.width)
        picture.height = Int32(buffer.height)
        let straight = buffer.converted(to: .rgba8)
        let ok = straight.withUnsafeBytes { raw in
            WebPPictureImportRGBA(&picture, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(straight.bytesPerRow))
        }
        guard ok != 0 else {
            WebPPictureFree(&picture)
            throw ImageCodecError.encodingFailed(format: .webp, message: message(picture.error_code))
        }
        return picture
    }

    private static func message(_ code: WebPEncodingError) -> String {
        switch code {
        case VP8_ENC_ERROR_OUT_OF_MEMORY: return "out of memory"
        case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: return "out of memory flushing bits"
        case VP8_ENC_ERROR_NULL_PARAMETER: return "null parameter"
        case VP8_ENC_ERROR_INVALID_CONFIGURATION: return "invalid configuration"
        case VP8_ENC_ERROR_BAD_DIMENSION: return "bad picture dimension"
        case VP8_ENC_ERROR_PARTITION0_OVERFLOW: return "partition 0 overflow (> 512 KiB)"
        case VP8_ENC_ERROR_PARTITION_OVERFLOW: return "partition overflow (> 16 MiB)"
        case VP8_ENC_ERROR_BAD_WRITE: return "write error"
        case VP8_ENC_ERROR_FILE_TOO_BIG: return "file too big (> 4 GiB)"
        default: return "libwebp encoding error \(code.rawValue)"
        }
    }
}
