import Foundation
import ImageCodec

/// Decodes AVIF stills and sequences through libavif (see `AVIFCodec` for what it does and does not do).
///
/// - Important: Stateless and thread-safe; decoding runs on the calling thread.
public struct AVIFDecoder: ImageDecoding {
    /// Makes the decoder.
    public init() {}

    /// The codec's name in errors and logs.
    public var name: String { "libavif" }
    /// The formats this codec handles (`ImageCodecRegistry` matches on the sniffed format).
    public var formats: [ImageFormat] { [.avif] }
    /// What this codec can do: stills, animations, incremental data.
    public var capabilities: ImageCodecCapabilities { [.still, .animation] }

    /// Decodes `data`: the first frame now, the others of a sequence on demand (or now with
    /// `options.preloadAllFrames`).
    ///
    /// - Throws: `ImageCodecError.limitExceeded` (before any pixels; `.frameCount` for more grid tiles than
    ///   `maximumGridTiles`), `.corruptData` with libavif's result and diagnostic text, `.truncated` when
    ///   libavif needs more data.
    public func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        // Before libavif: it keeps an AV1 decoder per grid tile (see `AVIFGridTiles`).
        try AVIFGridTiles.check(data, maximum: Self.maximumGridTiles)
        let session = try AVIFSession(data: data, limits: options.limits, colorManagement: options.colorManagement)
        let frameCount = options.firstFrameOnly ? 1 : session.frameCount
        let original = options.keepsOriginalData ? data : nil
        if let size = options.maxPixelSize, size > 0, session.conversion.changesPixels {
            // The colour transform is per pixel: a thumbnail (the first frame, as a still) is made small first and
            // converted at (about) its own size. A 10/12-bit source keeps 16 bits until its conversion: averaged
            // at 16 bits to twice the thumbnail, converted, then resized (`ColorConversion.deepThumbnail`); an
            // 8-bit one is resized, straight in and straight out, then converted.
            var thumbnail: PixelBuffer
            if let deep = try session.deepThumbnail(maxPixelSize: size) {
                thumbnail = deep
            } else {
                thumbnail = try session.frame(at: 0, pixelFormat: .rgba8, convertsColor: false).resized(maxPixelSize: size)
                session.conversion.apply(to: &thumbnail)
            }
            thumbnail.convert(to: options.pixelFormat)
            return Image(frames: [ImageFrame(buffer: thumbnail)], format: .avif, loopCount: 1, hasAlpha: session.hasAlpha,
                         originalData: original, colorSpace: session.colorSpace,
                         pixelICCProfile: session.conversion.pixelICCProfile)
        }
        let first = try session.frame(at: 0, pixelFormat: options.pixelFormat)
        let image: Image
        if frameCount == 1 {
            image = Image(frames: [ImageFrame(buffer: first)], format: .avif, loopCount: 1, hasAlpha: session.hasAlpha,
                          originalData: original, colorSpace: session.colorSpace,
                          pixelICCProfile: session.conversion.pixelICCProfile)
        } else if options.preloadAllFrames {
            var frames = [ImageFrame(buffer: first, duration: session.duration(at: 0))]
            for index in 1..<frameCount {
                frames.append(ImageFrame(buffer: try session.frame(at: index, pixelFormat: options.pixelFormat),
                                         duration: session.duration(at: index)))
            }
            image = Image(frames: frames, format: .avif, loopCount: 0, hasAlpha: session.hasAlpha, originalData: original,
                          colorSpace: session.colorSpace, pixelICCProfile: session.conversion.pixelICCProfile)
        } else {
            image = Image(firstFrame: ImageFrame(buffer: first, duration: session.duration(at: 0)), source: session,
                          format: .avif, loopCount: 0, storedLoopCount: nil, hasAlpha: session.hasAlpha,
                          originalData: original, colorSpace: session.colorSpace,
                          pixelICCProfile: session.conversion.pixelICCProfile)
        }
        return try image.stillThumbnail(maxPixelSize: options.maxPixelSize)
    }

    /// The 16-bit temporary (8 bytes a pixel) of a decode of a 10/12-bit image whose colour is converted before
    /// it is reduced to 8 bits, and for a thumbnail also the grid it is averaged to
    /// (`ColorConversion.deepThumbnailWorkingByteCount`); 0 for 8-bit images, `.preserve`, untagged and sRGB
    /// sources. Parses the file (libavif's headers, no pixels).
    public func colorTemporaryByteCount(of data: Data, options: DecodeOptions) -> Int {
        guard options.colorManagement != .preserve,
              (try? AVIFGridTiles.check(data, maximum: Self.maximumGridTiles)) != nil,
              let session = try? AVIFSession(data: data, limits: options.limits, colorManagement: options.colorManagement)
        else { return 0 }
        guard let size = options.maxPixelSize, size > 0 else { return session.deepTemporaryByteCount }
        guard session.makesDeepThumbnails else { return 0 }
        let grid = ColorConversion.deepThumbnailWorkingByteCount(width: session.displaySize.width,
                                                                 height: session.displaySize.height, maxPixelSize: size)
        let (sum, overflow) = session.deepTemporaryByteCount.addingReportingOverflow(grid)
        return overflow ? .max : sum
    }

    /// The most tiles the grid images of a file may have together (color and alpha): 512, e.g. a 16 × 16
    /// grid with an alpha grid. libavif 0.11 keeps an AV1 decoder per tile (about 400 KB with dav1d) until
    /// the grid is decoded.
    public static let maximumGridTiles = 512

    /// The header facts (libavif's parse: no pixels). Sizes are the displayed ones (after `clap`/`irot`).
    public func info(_ data: Data) throws -> ImageInfo {
        let session = try AVIFSession(data: data, limits: .default)
        return ImageInfo(format: .avif, width: session.displaySize.width, height: session.displaySize.height,
                         frameCount: session.frameCount, loopCount: session.frameCount > 1 ? 0 : 1,
                         hasAlpha: session.hasAlpha,
                         durations: session.frameCount > 1 ? (0..<session.frameCount).map(session.duration(at:)) : [0])
    }
}
