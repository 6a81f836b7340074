internal import CWebImageAVIF
internal import CWebImageCodecShims
import Foundation
import ImageCodec

/// Encodes AVIF stills and sequences through libavif (`avifEncoderAddImage`, `avifEncoderFinish`).
/// Registered by `AVIFCodec.register()` only when `AVIFCodec.isEncodingAvailable`.
///
/// `EncodeOptions.quality` maps to libavif's quantizers (1.0 → 0, 0.0 → 63); `isLossless` uses quantizer 0
/// and the identity matrix. Alpha is coded at most at quantizer 10, or at the colour's with
/// `EncodeOptions.quantisesAlpha` (automatic quality: `alphaQuantizer(for:colour:)`). 8-bit 4:4:4 always
/// (avifenc's default for RGB input): at equal SSIMULACRA2 it is as small as 4:2:0 on photographs and far smaller
/// on graphics and text, which 4:2:0 cannot bring to a high score at any quantizer (docs/quality.md, "AVIF encoder
/// settings"); `EncodeOptions.chromaSubsampling` is JPEG's.
///
/// - The AV1 encoder: libaom at `AVIFEncoder.speed(for:)` of `EncodeOptions.effort` (fast 9, balanced 8,
///   smallest 6) or at `EncodeOptions.avifSpeed` (automatic quality's winner: 5), chosen by bytes at equal SSIMULACRA2 × time against rav1e and SVT-AV1 on photos
///   (docs/performance.md, "AVIF and JPEG XL encoders"; docs/quality.md); another encoder the installed libavif
///   has when it lacks libaom.
/// - One thread per encode (`maxThreads` 1): a server encodes several results at once on its render queue, and
///   threads inside one encode would only compete with them for the same cores.
/// - `EncodeOptions.deadline` is checked before each frame: libavif 0.11 has no progress or abort hook, so one
///   frame's AV1 encode runs to its end.
/// - Working memory: libaom's frame buffers, lookahead and the YUV image, about `workingBytesPerPixel` bytes a
///   pixel (measured peak RSS over the input: docs/performance.md).
///
/// - Important: Stateless and thread-safe.
public struct AVIFEncoder: ImageEncoding {
    /// libaom's speed (0 slowest … 10 fastest) for `effort`: `.fast` 9, `.balanced` (the default) 8, `.smallest` 6.
    /// At equal SSIMULACRA2 on 400×300 thumbnails, speed 8 writes about 0.77× the bytes of speed 9 in 2.6× the
    /// time, speed 6 about 0.73× in 7× (docs/quality.md). `.balanced` also trims libaom's intra tools
    /// (`libaomOptions(for:)`: about 23 % cheaper for 3 % more bytes); no option brings speed 9 within 28 % of speed
    /// 8's bytes (docs/quality.md, "AVIF at speed 8 with libaom's options").
    public static func speed(for effort: EncodeEffort) -> Int32 {
        switch effort {
        case .fast: return 9
        case .balanced: return 8
        case .smallest: return 6
        }
    }
    /// The bytes libavif and libaom hold while encoding, per pixel of one frame, as an upper bound: 32 (measured
    /// at speed 8, 4:4:4: 28 bytes a pixel from the slope of `avifenc`'s peak RSS between 0.6 and 6 Mpx; speed 6
    /// holds more at 0.3–1 Mpx: `fixedWorkingBytes(for:)`).
    public static let workingBytesPerPixel = 32

    /// What libaom holds besides `workingBytesPerPixel` at `effort`, whatever the size: 0, and 128 MiB at
    /// `.smallest` (speed 6: `avifenc`'s peak RSS at 0.3–1 Mpx is 60–90 MB above speed 8's, 122 MB at 0.6 Mpx
    /// against 32 MB; a speed-6 render of 1000×625 in the server grew by 121 MB where 30 MB were reserved without
    /// it, `RenderBudgetAccountingTests`).
    public static func fixedWorkingBytes(for effort: EncodeEffort) -> Int {
        fixedWorkingBytes(speed: speed(for: effort))
    }
    /// What libaom holds besides `workingBytesPerPixel` at `speed`, whatever the size: 128 MiB at speed 6 and
    /// slower (speed 5, automatic quality's re-encode, held 123 MB at 1000×625 like speed 6, against 32 MB at
    /// speed 8: `avifenc`), else 0.
    public static func fixedWorkingBytes(speed: Int32) -> Int {
        speed <= 6 ? 128 << 20 : 0
    }
    /// The largest side libavif writes (AV1's 16-bit frame size fields): 65,536.
    public static let maximumSide = 65_536

    /// Makes the encoder.
    public init() {}

    /// The codec's name in errors and logs.
    public var name: String { "libavif" }
    /// The formats this codec handles (`ImageCodecRegistry` matches on the sniffed format).
    public var formats: [ImageFormat] { [.avif] }
    /// What this codec can do: stills, animations, incremental data.
    public var capabilities: ImageCodecCapabilities { [.still, .animation] }

    /// Encodes `frames` (one for a still) and `options`. Thread-safe.
    ///
    /// `loopCount` is not written: libavif 0.11 has no edit list to hold it, so every sequence loops forever
    /// (players read a sequence without one as looping). `webimage-server`'s `format=auto` writes an animation that
    /// stops as WebP or GIF instead.
    public func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data {
        // A speed set by automatic quality's re-encode is for bytes: libaom's own tools, none trimmed.
        try encode(frames, options: options, libaomOptions: options.avifSpeed == nil ? Self.libaomOptions(for: options.effort) : [])
    }

    /// `encode(_:format:loopCount:options:)` with `libaomOptions` instead of the effort's (tests compare them).
    func encode(_ frames: [ImageFrame], options: EncodeOptions, libaomOptions: [(key: String, value: String)]) throws -> Data {
        // A C string ends at the first NUL: "1\0 0" would reach libaom as "1".
        guard libaomOptions.allSatisfy({ !$0.key.contains("\0") && !$0.value.contains("\0") }) else {
            throw ImageCodecError.encodingFailed(format: .avif, message: "a libaom option holds a NUL")
        }
        guard let encoder = avifEncoderCreate() else { throw ImageCodecError.encodingFailed(format: .avif, message: "avifEncoderCreate") }
        defer { avifEncoderDestroy(encoder) }
        let quantizer = Self.quantizer(for: options)
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        let alphaQuantizer = Self.alphaQuantizer(for: options, colour: quantizer)
        encoder.pointee.minQuantizerAlpha = alphaQuantizer
        encoder.pointee.maxQuantizerAlpha = alphaQuantizer
        encoder.pointee.speed = options.avifSpeed.map { min(10, max(0, $0)) } ?? Self.speed(for: options.effort)
        encoder.pointee.maxThreads = 1
        encoder.pointee.codecChoice = Self.codecChoice
        encoder.pointee.timescale = 1000
        // libavif keeps the options and hands them to libaom in `avifEncoderAddImage`, which fails on one libaom
        // does not take (checked below, as every add is).
        if Self.codecChoice == AVIF_CODEC_CHOICE_AOM, !options.isLossless {
            for (key, value) in libaomOptions { avifEncoderSetCodecSpecificOption(encoder, key, value) }
        }
        guard let first = frames.first?.buffer else { throw ImageCodecError.encodingFailed(format: .avif, message: "no frames") }
        guard first.width <= Self.maximumSide, first.height <= Self.maximumSide else {
            throw ImageCodecError.encodingFailed(format: .avif, message: "AVIF images are at most \(Self.maximumSide) a side")
        }
        for frame in frames {
            try options.checkDeadline(.avif)
            guard frame.buffer.width == first.width, frame.buffer.height == first.height else {
                throw ImageCodecError.encodingFailed(format: .avif, message: "frames of different sizes")
            }
            guard let image = avifImageCreate(UInt32(first.width), UInt32(first.height), 8,
                                              AVIF_PIXEL_FORMAT_YUV444) else {
                throw ImageCodecError.encodingFailed(format: .avif, message: "avifImageCreate")
            }
            defer { avifImageDestroy(image) }
            if options.isLossless { image.pointee.matrixCoefficients = avifMatrixCoefficients(AVIF_MATRIX_COEFFICIENTS_IDENTITY) }
            let straight = frame.buffer.converted(to: .rgba8)
            if frames.count == 1, !options.isLossless {
                try Self.convertBT601(straight, into: image)
            } else {
                try check(Self.convertWithLibavif(straight, into: image))
            }
            let duration = UInt64(max(1, (frame.duration * 1000).rounded()))
            let flags = frames.count == 1 ? avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue) : avifAddImageFlags(0)
            try check(avifEncoderAddImage(encoder, image, duration, flags))
        }
        try options.checkDeadline(.avif)
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        try check(avifEncoderFinish(encoder, &output))
        guard let bytes = output.data else { throw ImageCodecError.encodingFailed(format: .avif, message: "no output") }
        return Data(bytes: bytes, count: output.size)
    }

    /// libaom's options for lossy output at `effort` (libavif's codec-specific options; only when libaom encodes).
    /// At `.balanced`: intra transforms DCT only, CDEF on, the smooth, Paeth, filter-intra and intra-edge tools off,
    /// coefficient and mode cost updates off (`…-cost-upd-freq=3`; 2, once a tile, wrote the same bytes). Measured at equal SSIMULACRA2 on
    /// 14 corpus files at 400×300: 0.77× speed 8's instructions per encode for 1.031× its bytes
    /// (docs/quality.md, "AVIF at speed 8 with libaom's options"); in the service, on a quiet machine, 21.1–21.6 ms
    /// of CPU per cold AVIF crop instead of 22.6–23.5, 2.8× thumbor's cold WebP crop instead of 2.6–2.9×
    /// (docs/performance.md): bytes × time 0.95–0.97 of plain speed 8's. None at
    /// `.fast` (speed 9 already skips the search these tools live in) nor at `.smallest` (bytes first).
    public static func libaomOptions(for effort: EncodeEffort) -> [(key: String, value: String)] {
        guard effort == .balanced else { return [] }
        return [("use-intra-dct-only", "1"), ("enable-cdef", "1"), ("enable-smooth-intra", "0"), ("enable-paeth-intra", "0"),
                ("enable-filter-intra", "0"), ("enable-intra-edge-filter", "0"), ("coeff-cost-upd-freq", "3"),
                ("mode-cost-upd-freq", "3")]
    }

    /// Fills `image`'s Y, Cb and Cr planes (and its alpha plane when `straight` is not opaque) from straight RGBA
    /// with BT.601's coefficients at full range, as `avifImageRGBToYUV` does for an image of unspecified matrix
    /// coefficients (libavif's default), within one code (`wi_rgba_to_yuv444_bt601`; libavif 0.11 converts 8-bit
    /// RGBA to 4:4:4 in floating point, about 8 % of a cold 400×300 AVIF request). Stills only: an animation's
    /// frames keep libavif's conversion, which decides the alpha plane the same way for every frame.
    static func convertBT601(_ straight: PixelBuffer, into image: UnsafeMutablePointer<avifImage>) throws {
        let opaque = straight.isOpaque
        let planes = opaque ? AVIF_PLANES_YUV.rawValue : AVIF_PLANES_YUV.rawValue | AVIF_PLANES_A.rawValue
        guard avifImageAllocatePlanes(image, avifPlanesFlags(planes)) == AVIF_RESULT_OK,
              let y = image.pointee.yuvPlanes.0, let cb = image.pointee.yuvPlanes.1, let cr = image.pointee.yuvPlanes.2 else {
            throw ImageCodecError.encodingFailed(format: .avif, message: "avifImageAllocatePlanes")
        }
        let (width, height) = (straight.width, straight.height)
        let rowBytes = image.pointee.yuvRowBytes
        straight.withUnsafeBytes { pixels in
            guard let rgba = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            wi_rgba_to_yuv444_bt601(rgba, straight.bytesPerRow, width, height, y, Int(rowBytes.0), cb, Int(rowBytes.1),
                                    cr, Int(rowBytes.2))
            if !opaque, let alpha = image.pointee.alphaPlane {
                wi_rgba_alpha_plane(rgba, straight.bytesPerRow, width, height, alpha, Int(image.pointee.alphaRowBytes))
            }
        }
    }

    /// Converts straight RGBA to `image`'s planes by `avifImageRGBToYUV` (its matrix coefficients and range).
    static func convertWithLibavif(_ straight: PixelBuffer, into image: UnsafeMutablePointer<avifImage>) -> avifResult {
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.depth = 8
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.rowBytes = UInt32(straight.bytesPerRow)
        return straight.withUnsafeBytes { pixels -> avifResult in
            rgb.pixels = UnsafeMutablePointer(mutating: pixels.baseAddress?.assumingMemoryBound(to: UInt8.self))
            return avifImageRGBToYUV(image, &rgb)
        }
    }

    /// libaom when the installed libavif has it, else libavif's own choice (rav1e, SVT-AV1).
    static let codecChoice: avifCodecChoice = {
        avifCodecName(AVIF_CODEC_CHOICE_AOM, avifCodecFlags(AVIF_CODEC_FLAG_CAN_ENCODE.rawValue)) != nil
            ? AVIF_CODEC_CHOICE_AOM : AVIF_CODEC_CHOICE_AUTO
    }()

    /// The alpha plane's quantizer for a colour quantizer: 0 when lossless; the colour's when
    /// `EncodeOptions.quantisesAlpha` (automatic quality's scored search, which scores on black and white too);
    /// otherwise at most 10 (alpha edges stay nearly exact at any quality).
    static func alphaQuantizer(for options: EncodeOptions, colour quantizer: Int32) -> Int32 {
        if options.isLossless { return 0 }
        return options.quantisesAlpha ? quantizer : min(quantizer, 10)
    }

    /// AV1's quantizer (0…63, lower is finer) for `options`: 0 when lossless, else (1 − quality) × 63 truncated
    /// (quality 1.0 → 0, 0.0 → 63). Automatic quality searches one level per quantizer (`AutomaticQuality.Grid`).
    static func quantizer(for options: EncodeOptions) -> Int32 {
        options.isLossless ? 0 : Int32((1 - min(max(options.quality, 0), 1)) * 63)
    }

    private func check(_ result: avifResult) throws {
        guard result == AVIF_RESULT_OK else {
            throw ImageCodecError.encodingFailed(format: .avif, message: String(cString: avifResultToString(result)))
        }
    }
}
