/// Limits a decoder enforces from the image header, before allocating any pixels.
///
/// They stop decompression bombs (a 65536×65536 PNG of 100 bytes, a GIF of 100,000 frames, a JPEG of
/// thousands of scans) with a clear
/// `ImageCodecError.limitExceeded` in microseconds. Limits apply to what is allocated: a huge image decoded
/// as a small thumbnail passes when the thumbnail fits.
///
/// ```swift
/// let image = try ImageDecoder.decode(data, limits: DecodeLimits(maxPixelsPerFrame: 4_000_000))
/// ```
///
/// - Important: A value type; thread-safe.
public struct DecodeLimits: Sendable, Hashable {
    /// Which limit an image exceeded.
    public enum Limit: String, Sendable, Hashable {
        /// `maxPixelsPerFrame`.
        case pixelsPerFrame
        /// `maxTotalPixels`.
        case totalPixels
        /// `maxFrameCount`.
        case frameCount
        /// `maxDimension`: a width or height over it.
        case dimension
        /// A JPEG of more than `DecodeLimits.maxScanCount` scans (fixed; checked inside libjpeg as it reads).
        case scanCount
    }

    /// Most pixels (width × height) one frame may have. Default 75,000,000 (75 Mpx, 300 MB as RGBA8: thumbor's
    /// 75 MP; imgproxy allows 50, Pillow errors above 179). An 8000 × 8000 photo (64 Mpx) fits; a
    /// 15000 × 15000 PNG bomb does not (it may still decode as a thumbnail, see `DecodeOptions.maxPixelSize`).
    public var maxPixelsPerFrame: Int
    /// Most pixels all frames of one animation may have together (canvas pixels × frames, as imgproxy counts).
    /// Default 200,000,000 (frames decode lazily, so this bounds work, and memory only with `preloadAllFrames`).
    public var maxTotalPixels: Int
    /// Most frames one animation may have. Default 1,000 (imgproxy decodes 1 frame by default; long GIFs on
    /// the web stay under a few hundred).
    public var maxFrameCount: Int
    /// Longest width or height, in pixels, of a frame, a canvas or a thumbnail's source. Default 32,768 (libpng
    /// itself refuses sides over 1,000,000 here, `WI_PNG_MAX_SIDE`; JPEG stops at 65,500 and WebP at 16,383).
    public var maxDimension: Int

    /// Most scans a JPEG may have: 500, as libjpeg-turbo's own tools (`djpeg -maxscans`). Checked inside
    /// libjpeg while it reads, so a progressive file of thousands of tiny scans stops after 500 of them.
    public static let maxScanCount = 500

    /// The defaults described on each property: for a service that decodes images it does not control.
    public static let `default` = DecodeLimits()
    /// No limits at all; only for trusted input (the scan limit and libpng's own limits still apply).
    public static let none = DecodeLimits(maxPixelsPerFrame: .max, maxTotalPixels: .max, maxFrameCount: .max,
                                          maxDimension: .max)

    /// Makes limits; each parameter defaults to the value documented on its property.
    public init(maxPixelsPerFrame: Int = 75_000_000, maxTotalPixels: Int = 200_000_000, maxFrameCount: Int = 1_000,
                maxDimension: Int = 32_768) {
        self.maxPixelsPerFrame = maxPixelsPerFrame
        self.maxTotalPixels = maxTotalPixels
        self.maxFrameCount = maxFrameCount
        self.maxDimension = maxDimension
    }

    /// The error of a JPEG with more than `maxScanCount` scans.
    static var scanLimitExceeded: ImageCodecError {
        .limitExceeded(limit: .scanCount, actual: maxScanCount + 1, maximum: maxScanCount)
    }

    /// Throws `limitExceeded(.dimension)` when a side is over `maxDimension`, or `invalidDimensions` when a side
    /// is not positive.
    public func checkDimensions(width: Int, height: Int) throws {
        guard width > 0, height > 0 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        let side = max(width, height)
        guard side <= maxDimension else {
            throw ImageCodecError.limitExceeded(limit: .dimension, actual: side, maximum: maxDimension)
        }
    }

    /// Throws `limitExceeded` unless a frame of `width × height` pixels fits (sides and pixels), or `invalidDimensions` when the
    /// size is not positive or overflows.
    public func check(width: Int, height: Int) throws {
        guard width > 0, height > 0 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow else { throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: .max, maximum: maxPixelsPerFrame) }
        guard pixels <= maxPixelsPerFrame else {
            throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: pixels, maximum: maxPixelsPerFrame)
        }
        try checkDimensions(width: width, height: height)
    }

    /// Throws unless an animation of `frameCount` frames on a `width × height` canvas fits every limit.
    public func check(width: Int, height: Int, frameCount: Int) throws {
        try check(width: width, height: height)
        guard frameCount <= maxFrameCount else {
            throw ImageCodecError.limitExceeded(limit: .frameCount, actual: frameCount, maximum: maxFrameCount)
        }
        let (total, overflow) = (width * height).multipliedReportingOverflow(by: max(frameCount, 1))
        guard !overflow, total <= maxTotalPixels else {
            throw ImageCodecError.limitExceeded(limit: .totalPixels, actual: overflow ? .max : total, maximum: maxTotalPixels)
        }
    }
}
