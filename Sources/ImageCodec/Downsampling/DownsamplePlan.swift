/// The size and limit checks of one downsampled (thumbnail) decode, shared by the decoders that honour
/// `DecodeOptions.maxPixelSize`.
///
/// Limits apply to what is allocated: the thumbnail (and any intermediate buffer, such as JPEG's
/// DCT-scaled image) must fit `DecodeLimits.maxPixelsPerFrame`. The full-size source is never allocated, so
/// it may exceed that limit, but the decode work stays capped: the source may have at most
/// `workFactor` (4) × `maxPixelsPerFrame` pixels (saturating; 300 Mpx with the default limits), so a
/// 100-byte "65536×65536" bomb still fails in microseconds instead of inflating 16 GiB of pixels.
///
/// - Important: A value type; thread-safe.
struct DownsamplePlan {
    /// How many times `maxPixelsPerFrame` the source of a thumbnail decode may have.
    static let workFactor = 4

    /// Source size as stored.
    let sourceWidth: Int
    let sourceHeight: Int
    /// The thumbnail size (`PixelBuffer.fittingSize`).
    let width: Int
    let height: Int

    /// Whether the image is actually shrunk (otherwise decode at full size as usual).
    var isDownsampling: Bool { width != sourceWidth || height != sourceHeight }

    /// A plan for `maxPixelSize`, or `nil` when `maxPixelSize` is `nil` or the image already fits (then the
    /// caller decodes at full size with the usual checks). Throws `invalidDimensions` for a non-positive size.
    static func make(width: Int, height: Int, maxPixelSize: Int?) throws -> DownsamplePlan? {
        guard width > 0, height > 0 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
        guard let maxPixelSize, maxPixelSize > 0 else { return nil }
        let size = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: maxPixelSize)
        guard size.width != width || size.height != height else { return nil }
        return DownsamplePlan(sourceWidth: width, sourceHeight: height, width: size.width, height: size.height)
    }

    /// Checks the thumbnail against `limits` (it is allocated) and the source against the work cap.
    func check(_ limits: DecodeLimits) throws {
        try limits.check(width: width, height: height)
        try limits.checkDimensions(width: sourceWidth, height: sourceHeight)
        let (pixels, overflow) = sourceWidth.multipliedReportingOverflow(by: sourceHeight)
        let (cap, capOverflow) = limits.maxPixelsPerFrame.multipliedReportingOverflow(by: Self.workFactor)
        let maximum = capOverflow ? Int.max : cap
        guard !overflow, pixels <= maximum else {
            throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: overflow ? .max : pixels, maximum: maximum)
        }
    }
}
