/// Limits a decoder enforces from the image header, before allocating any pixels.
///
/// They stop decompression bombs (a 65536×65536 PNG of 100 bytes, a GIF of 100,000 frames) with a clear
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
    }

    /// Most pixels (width × height) one frame may have. Default 16384 × 16384 (268 Mpx, 1 GiB as RGBA8).
    public var maxPixelsPerFrame: Int
    /// Most pixels all frames of one animation may have together (canvas pixels × frames).
    /// Default 2^30 (1 Gpx).
    public var maxTotalPixels: Int
    /// Most frames one animation may have. Default 10,000.
    public var maxFrameCount: Int

    /// The defaults described on each property.
    public static let `default` = DecodeLimits()
    /// No limits at all; only for trusted input.
    public static let none = DecodeLimits(maxPixelsPerFrame: .max, maxTotalPixels: .max, maxFrameCount: .max)

    /// Makes limits; each parameter defaults to the value documented on its property.
    public init(maxPixelsPerFrame: Int = 16384 * 16384, maxTotalPixels: Int = 1 << 30, maxFrameCount: Int = 10_000) {
        self.maxPixelsPerFrame = maxPixelsPerFrame
        self.maxTotalPixels = maxTotalPixels
        self.maxFrameCount = maxFrameCount
    }

    /// Throws `limitExceeded` unless a frame of `width × height` pixels fits, or `invalidDimensions` when the
    /// size is not positive or overflows.
    public func check(width: Int, height: Int) throws {
        guard width > 0, height > 0 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow else { throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: .max, maximum: maxPixelsPerFrame) }
        guard pixels <= maxPixelsPerFrame else {
            throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: pixels, maximum: maxPixelsPerFrame)
        }
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
