internal import CWebImageJXL
import Foundation
import ImageCodec

/// Encodes JPEG XL stills and animations through libjxl 0.7 (`JxlEncoderAddImageFrame`,
/// `JxlEncoderProcessOutput`), and recompresses JPEG files losslessly (`recompressJPEG`). Registered by
/// `JXLCodec.register()`.
///
/// - `EncodeOptions.quality` 0…1 becomes a Butteraugli distance by cjxl's own mapping of its `-q` (quality 0.9 →
///   distance 1.0, 0.8 → 1.9, 0.5 → 4.6); `isLossless` writes a lossless (modular) image.
/// - Effort `defaultEffort` (4 of libjxl's 1…9; its default 7 costs several times the time for a few per cent
///   of bytes: docs/performance.md), one thread (no parallel runner: a server encodes several results at once).
/// - 8-bit sRGB, straight alpha (premultiplied input is converted); animations with millisecond ticks and
///   `loopCount` as `num_loops` (0 = forever).
/// - `EncodeOptions.deadline` is checked before each frame and between output chunks (libjxl 0.7 encodes a frame
///   in one call it cannot interrupt); past it, `ImageCodecError.deadlineExceeded`.
/// - Working memory: libjxl holds each frame as 32-bit float planes plus its encoder's own (about 40 bytes a
///   pixel at efforts 4–6, measured; `JXLEncoder.workingBytesPerPixel`); frames are added and encoded one at a
///   time, so an animation holds one frame's worth besides the output.
///
/// - Important: Stateless and thread-safe.
public struct JXLEncoder: ImageEncoding {
    /// libjxl's effort (1 fastest … 9 slowest) for lossless images and lossless JPEG recompression: 4.
    public static let defaultEffort = 4

    /// libjxl's effort for lossy images at `effort`: `.fast` 4, `.balanced` (the default) 5, `.smallest` 6. At
    /// equal SSIMULACRA2 on 400×300 thumbnails effort 5 writes about 0.90× the bytes of effort 4 (effort 3 the same
    /// as 4) in 2–5× the time and the same memory; effort 7 saves 1 % more for 3× the memory (docs/quality.md).
    public static func lossyEffort(for effort: EncodeEffort) -> Int {
        switch effort {
        case .fast: return 4
        case .balanced: return 5
        case .smallest: return 6
        }
    }
    /// The bytes libjxl holds while encoding, per pixel of one frame, as an upper bound (measured peak RSS over
    /// the input, at effort 4, 1–16 Mpx: docs/performance.md).
    public static let workingBytesPerPixel = 48
    /// The bytes libjxl holds while recompressing a JPEG losslessly, per pixel, as an upper bound (measured peak
    /// RSS over the pixels: docs/performance.md).
    public static let jpegRecompressionBytesPerPixel = 24
    /// The largest side libjxl writes at codestream level 5 (the level every decoder must read): 262,144.
    public static let maximumSide = 1 << 18

    /// Lossy images with a side under this many pixels (32) are encoded at a distance of at most
    /// `narrowImageMaximumDistance`. libjxl 0.7 dies with SIGSEGV on narrow images at larger distances (`cjxl`
    /// itself does, at efforts 4–6, on flat and noise pixels): VarDCT at 4.5 and more on widths 1–8 and 17–24 at
    /// heights 2,100–4,096 (not at widths 9–16 or 25 and wider, nor 2,048 or 6,000 tall), modular mode at 25 on
    /// 1 × 1,000 and 2 × 1,000. The regions have no pattern to trust, so every image that narrow on either side is
    /// kept to the distance no narrow shape measured crashed at (docs/quality.md); its bytes barely matter.
    public static let narrowImageSide = 32
    /// The largest distance a narrow image is encoded at (`narrowImageSide`): 2.0 (quality about 79).
    public static let narrowImageMaximumDistance: Float = 2.0

    /// Makes the encoder.
    public init() {}

    /// The codec's name in errors and logs.
    public var name: String { "libjxl" }
    /// The formats this codec handles.
    public var formats: [ImageFormat] { [.jpegXL] }
    /// What this codec can do: stills and animations.
    public var capabilities: ImageCodecCapabilities { [.still, .animation] }

    /// Encodes `frames` (one for a still) with `loopCount` (0 = forever) and `options`. Thread-safe.
    ///
    /// - Throws: `ImageCodecError.encodingFailed` (frames of different sizes, libjxl's error),
    ///   `.deadlineExceeded` past `options.deadline`.
    public func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data {
        guard let first = frames.first?.buffer else { throw ImageCodecError.encodingFailed(format: .jpegXL, message: "no frames") }
        let (width, height) = (first.width, first.height)
        guard frames.allSatisfy({ $0.buffer.width == width && $0.buffer.height == height }) else {
            throw ImageCodecError.encodingFailed(format: .jpegXL, message: "every frame must be \(width)×\(height)")
        }
        guard width <= Self.maximumSide, height <= Self.maximumSide else {
            throw ImageCodecError.encodingFailed(format: .jpegXL, message: "JPEG XL images are at most \(Self.maximumSide) a side")
        }
        try options.checkDeadline(.jpegXL)
        let session = try JXLEncodeSession()
        let animated = frames.count > 1
        let hasAlpha = frames.contains { !$0.buffer.isOpaque }

        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(width)
        info.ysize = UInt32(height)
        info.bits_per_sample = 8
        info.exponent_bits_per_sample = 0
        info.num_color_channels = 3
        info.num_extra_channels = hasAlpha ? 1 : 0
        info.alpha_bits = hasAlpha ? 8 : 0
        info.uses_original_profile = options.isLossless ? 1 : 0
        if animated {
            info.have_animation = 1
            info.animation.tps_numerator = 1000
            info.animation.tps_denominator = 1
            info.animation.num_loops = UInt32(clamping: max(0, loopCount))
        }
        try session.check(JxlEncoderSetBasicInfo(session.encoder, &info), "JxlEncoderSetBasicInfo")
        var color = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&color, 0)
        try session.check(JxlEncoderSetColorEncoding(session.encoder, &color), "JxlEncoderSetColorEncoding")

        guard let settings = JxlEncoderFrameSettingsCreate(session.encoder, nil) else {
            throw ImageCodecError.encodingFailed(format: .jpegXL, message: "JxlEncoderFrameSettingsCreate")
        }
        let effort = options.isLossless ? Self.defaultEffort : Self.lossyEffort(for: options.effort)
        try session.check(JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(effort)), "effort")
        if options.isLossless {
            try session.check(JxlEncoderSetFrameLossless(settings, 1), "JxlEncoderSetFrameLossless")
        } else {
            var distance = Self.distance(quality: options.quality)
            if min(width, height) < Self.narrowImageSide { distance = min(distance, Self.narrowImageMaximumDistance) }
            try session.check(JxlEncoderSetFrameDistance(settings, distance), "JxlEncoderSetFrameDistance")
        }

        var pixelFormat = JxlPixelFormat(num_channels: hasAlpha ? 4 : 3, data_type: JXL_TYPE_UINT8,
                                         endianness: JXL_NATIVE_ENDIAN, align: 0)
        for (index, frame) in frames.enumerated() {
            try options.checkDeadline(.jpegXL)
            if animated {
                var header = JxlFrameHeader()
                JxlEncoderInitFrameHeader(&header)
                header.duration = UInt32(clamping: max(1, Int((frame.duration * 1000).rounded())))
                try session.check(JxlEncoderSetFrameHeader(settings, &header), "JxlEncoderSetFrameHeader")
            }
            let packed = Self.packed(frame.buffer, channels: hasAlpha ? 4 : 3)
            let added = packed.withUnsafeBytes { raw in
                JxlEncoderAddImageFrame(settings, &pixelFormat, raw.baseAddress, raw.count)
            }
            try session.check(added, "JxlEncoderAddImageFrame")
            if index == frames.count - 1 { JxlEncoderCloseInput(session.encoder) }
            // Encode what was added now: libjxl keeps a queued frame as float planes, so queuing every frame of an
            // animation first would hold them all at once.
            try session.drain(options)
        }
        return session.output()
    }

    /// Recompresses `jpeg` losslessly into JPEG XL (`JxlEncoderAddJPEGFrame`, with the reconstruction data
    /// `djxl` needs to give the original file back, bit for bit): about 20 % smaller, no pixel changed, for a JPEG
    /// served at its own size. The JPEG's own ICC profile and EXIF travel with it.
    ///
    /// - Throws: `ImageCodecError.encodingFailed` when libjxl cannot take this JPEG (e.g. CMYK, arithmetic coding,
    ///   corrupt), then encode the pixels instead; `.deadlineExceeded` past `options.deadline`.
    public static func recompressJPEG(_ jpeg: Data, options: EncodeOptions = EncodeOptions()) throws -> Data {
        try options.checkDeadline(.jpegXL)
        let session = try JXLEncodeSession()
        try session.check(JxlEncoderUseContainer(session.encoder, 1), "JxlEncoderUseContainer")
        try session.check(JxlEncoderStoreJPEGMetadata(session.encoder, 1), "JxlEncoderStoreJPEGMetadata")
        guard let settings = JxlEncoderFrameSettingsCreate(session.encoder, nil) else {
            throw ImageCodecError.encodingFailed(format: .jpegXL, message: "JxlEncoderFrameSettingsCreate")
        }
        try session.check(JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(defaultEffort)), "effort")
        let added = jpeg.withUnsafeBytes { raw in
            JxlEncoderAddJPEGFrame(settings, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count)
        }
        try session.check(added, "JxlEncoderAddJPEGFrame")
        JxlEncoderCloseInput(session.encoder)
        try session.drain(options)
        return session.output()
    }

    /// cjxl's mapping of its quality (0…100) to a Butteraugli distance (`-q` in cjxl 0.7).
    static func distance(quality: Double) -> Float {
        let q = min(max(quality, 0), 1) * 100
        let d = q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5) / 6.25
        return Float(min(max(d, 0.1), 25))
    }

    /// The frame as packed 8-bit straight RGB or RGBA rows.
    private static func packed(_ buffer: PixelBuffer, channels: Int) -> [UInt8] {
        let straight = buffer.converted(to: .rgba8)
        var out = [UInt8](repeating: 0, count: straight.width * straight.height * channels)
        straight.withUnsafeBytes { raw in
            out.withUnsafeMutableBufferPointer { dst in
                var o = 0
                for y in 0..<straight.height {
                    let row = y * straight.bytesPerRow
                    for x in 0..<straight.width {
                        let p = row + x * 4
                        dst[o] = raw[p]; dst[o + 1] = raw[p + 1]; dst[o + 2] = raw[p + 2]
                        if channels == 4 { dst[o + 3] = raw[p + 3] }
                        o += channels
                    }
                }
            }
        }
        return out
    }
}
