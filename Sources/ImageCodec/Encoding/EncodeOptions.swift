/// How to encode.
///
/// ```swift
/// let fixed = EncodeOptions(quality: 0.8)
/// let automatic = EncodeOptions(automaticQuality: .medium)   // the lowest quality that still scores 70
/// ```
///
/// Automatic quality is a separate property rather than a case of an enum in place of `quality`: every encoder
/// (the built-in ones and those other modules register) reads `quality` as a number, and the search hands each
/// of them a plain fixed quality per attempt, so they need not know automatic quality exists; `quality` also
/// stays what animations and lossless formats use.
///
/// - Important: A value type; thread-safe.
public struct EncodeOptions: Sendable, Hashable {
    /// Quality for lossy formats (JPEG, lossy WebP, AVIF, JPEG XL), 0…1: a value outside is clamped to it, NaN
    /// becomes the default. Default 0.9. With `automaticQuality`, used only where no search runs (animations).
    public var quality: Double {
        get { clampedQuality }
        set { clampedQuality = newValue.isNaN ? Self.defaultQuality : min(1, max(0, newValue)) }
    }
    private var clampedQuality = EncodeOptions.defaultQuality
    /// `quality`'s default and what NaN becomes: 0.9.
    public static let defaultQuality = 0.9
    /// Encode WebP, AVIF or JPEG XL losslessly. Default `false`.
    public var isLossless: Bool
    /// Write an interlaced (Adam7) PNG / progressive JPEG. Default `false`.
    public var isProgressive: Bool
    /// When the encode must give up: an encoder checks it where its library lets it stop (libwebp's progress hook,
    /// between the frames of an animation, between libjxl's output chunks) and throws
    /// `ImageCodecError.deadlineExceeded` once it has passed. A library call that cannot be interrupted (one
    /// AV1 frame in libavif 0.11, which has no abort hook) runs to its end first. Default `nil`: no deadline.
    public var deadline: ContinuousClock.Instant?
    /// When set, still lossy output is encoded at the lowest quality whose SSIMULACRA2 score against the
    /// pixels given stays at or above the target (`AutomaticQuality`), and for JPEG the chroma subsampling is
    /// chosen per image. Default `nil` (fixed `quality`).
    public var automaticQuality: QualityTarget?
    /// JPEG chroma subsampling. Default `.yuv420` (libjpeg's); automatic quality chooses per image.
    public var chromaSubsampling: ChromaSubsampling
    /// How hard JPEG and WebP work for fewer bytes at the same quality (`EncodeEffort`). Default `.balanced`.
    public var effort: EncodeEffort
    /// The quantisation tables JPEG output scales by `quality`. Default `.robidoux` (about 5 % fewer bytes than
    /// `.annexK` at the same SSIMULACRA2, at no cost in time).
    public var jpegQuantization: JPEGQuantization
    /// Lossy WebP converts RGB to YUV with libwebp's iterative sharp conversion (`use_sharp_yuv`) even when
    /// `effort` is not `.smallest`. Set by automatic quality's scored search (`AutomaticQuality`). Default `false`.
    /// `@_spi(QualityModel)`: the benchmark that fits the predictor encodes as the search does.
    @_spi(QualityModel) public var usesSharpYUV = false
    /// Lossy output quantises its alpha plane as coarsely as its colour, where it would otherwise keep it (nearly)
    /// exact: WebP at the colour's quality, never under 70 (16 levels; `WebPEncoder.minimumQuantisedAlphaQuality`),
    /// AVIF at the colour's quantizer (otherwise at most 10). Set by automatic quality's scored search, which scores
    /// every output on grey, black and white (`ScoringReference`): transparent corpus images at 0.80–0.95× the
    /// bytes they had with exact alpha and a score on grey alone (docs/quality.md). Default `false`. `package`:
    /// the AVIF module reads it.
    package var quantisesAlpha = false
    /// libwebp's spatial noise shaping (0…100) for lossy WebP; `nil` keeps libwebp's 50. Set by automatic quality's
    /// scored search (`WebPEncoder.scoredNoiseShaping(pixelCount:)`). Default `nil`.
    var webPNoiseShaping: Int32?
    /// libaom's speed for AVIF output (0 slowest … 10 fastest) in place of the effort's
    /// (`AVIFEncoder.speed(for:)`), without the effort's trimmed intra tools. Set by automatic quality's scored
    /// search for its winner's re-encode (`AutomaticQuality.avifRefinementSpeed`). Default `nil`. `package`: the AVIF
    /// module reads it.
    package var avifSpeed: Int32?

    /// Makes options; every parameter defaults to the value documented on its property.
    public init(quality: Double = 0.9, isLossless: Bool = false, isProgressive: Bool = false,
                deadline: ContinuousClock.Instant? = nil, automaticQuality: QualityTarget? = nil,
                chromaSubsampling: ChromaSubsampling = .yuv420, effort: EncodeEffort = .balanced,
                jpegQuantization: JPEGQuantization = .robidoux) {
        self.isLossless = isLossless
        self.isProgressive = isProgressive
        self.deadline = deadline
        self.automaticQuality = automaticQuality
        self.chromaSubsampling = chromaSubsampling
        self.effort = effort
        self.jpegQuantization = jpegQuantization
        self.quality = quality
    }

    /// Whether `deadline` has passed (`false` without one).
    public var isPastDeadline: Bool {
        guard let deadline else { return false }
        return ContinuousClock.now >= deadline
    }

    /// Throws `ImageCodecError.deadlineExceeded(format:)` when `deadline` has passed.
    public func checkDeadline(_ format: ImageFormat) throws(ImageCodecError) {
        if isPastDeadline { throw .deadlineExceeded(format: format) }
    }
}

/// How many chroma samples a JPEG keeps.
///
/// - Important: A value type; thread-safe.
public enum ChromaSubsampling: String, Sendable, Hashable {
    /// Half the chroma resolution in both directions: smaller, softer colour edges (libjpeg's default).
    case yuv420
    /// Full chroma resolution: sharp colour edges (text, graphics, saturated detail).
    case yuv444
}

/// How hard the lossy encoders work for fewer bytes at the same quality: a service trades encode time for bytes
/// served (and cached) with it. Measured on 400 px thumbnails of the corpus at equal SSIMULACRA2 (docs/quality.md,
/// "Tuned encoders").
///
/// | effort | JPEG | WebP | AVIF (`WebImageAVIF`) | JPEG XL (`WebImageJXL`) |
/// |---|---|---|---|---|
/// | `.fast` | baseline, standard Huffman tables | method 2: ~0.3× the time, ~5 % more bytes | libaom speed 9: ~1.3× the bytes, ~0.4× the time | effort 4: ~1.1× the bytes, ~0.3× the time |
/// | `.balanced` | the same (libjpeg-turbo encodes a 400 px thumbnail in ~0.3 ms) | method 4 (libwebp's default) | speed 8, intra tools trimmed (~0.77× the work, ~3 % more bytes) | effort 5 |
/// | `.smallest` | progressive (optimised Huffman tables): ~5.5 % fewer bytes, ~6× the encode time | method 6 and sharp RGB→YUV: ~7 % fewer bytes at scores ≥ 76 (5 % at 70), ~3× the time | speed 6: ~5 % fewer bytes, ~2.5× the time | effort 6: ~1.3× effort 5's time |
///
/// - Important: A value type; thread-safe.
public enum EncodeEffort: String, Sendable, Hashable, CaseIterable {
    /// The fastest encodes: WebP method 2, AVIF speed 9, JPEG XL effort 4; JPEG as `.balanced`.
    case fast
    /// The default: libwebp's method 4; baseline JPEG with standard Huffman tables (optimising them costs 2.5× the
    /// encode time for 4 % fewer bytes, which a 400 px JPEG's time budget does not allow); AVIF speed 8 with
    /// libaom's intra tools trimmed (`AVIFEncoder.libaomOptions(for:)`); JPEG XL effort 5.
    case balanced
    /// The fewest bytes: progressive JPEG (whatever `isProgressive` says); WebP method 6 (5 for pictures with
    /// alpha, whose lossless alpha plane method 6 compresses up to 80× slower) with sharp RGB→YUV conversion
    /// (`use_sharp_yuv`); AVIF speed 6; JPEG XL effort 6.
    case smallest
}

/// The quantisation tables of JPEG output, scaled by the quality as libjpeg scales its own (IJG scale) and kept
/// baseline-compatible (entries at most 255): every decoder reads either.
///
/// - Important: A value type; thread-safe.
public enum JPEGQuantization: String, Sendable, Hashable, CaseIterable {
    /// The example tables of the JPEG standard (ITU-T T.81 Annex K), libjpeg's default and what most encoders
    /// (Pillow, thumbor) write.
    case annexK
    /// N. Robidoux's table (mozjpeg's table 3): finer at low frequencies, coarser at the highest; used for luma,
    /// and for chroma at 4:2:0 (Annex K's chroma table at 4:4:4). About 5 % fewer bytes than `.annexK` at the same
    /// SSIMULACRA2 on 4:2:0 thumbnails (about the same at 4:4:4). At the same `quality`, 4:2:0 output scores about
    /// the same as `.annexK`'s with 4-8 % fewer bytes; 4:4:4 output about 2 points lower with 9 % fewer bytes.
    case robidoux
}
