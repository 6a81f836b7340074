import ImageCodec

/// An animation stored as one bitmap holding every frame (a sprite sheet), with a rectangle and a duration per
/// frame (YYSpriteSheetImage).
///
/// ```swift
/// let sheet = try SpriteSheetImage(sheet: bitmap,
///                                  frames: (0..<8).map { .init(rect: PixelRect(x: $0 * 32, y: 0, width: 32, height: 32), duration: 0.1) })
/// let player = AnimatedImagePlayer(image: sheet)
/// ```
/// Every frame hands out the same bitmap (no copy) and its cell in `animatedContentsRect(at:)`; the renderer
/// draws that cell.
///
/// - Important: Immutable; thread-safe.
public final class SpriteSheetImage: AnimatedImage {
    /// One cell of the sheet.
    public struct Frame: Sendable, Hashable {
        /// Where the frame sits in the sheet.
        public var rect: PixelRect
        /// How long it shows, in seconds.
        public var duration: Double
        /// Makes a cell.
        public init(rect: PixelRect, duration: Double) {
            self.rect = rect
            self.duration = duration
        }
    }

    /// The bitmap holding every frame.
    public let sheet: PixelBuffer
    /// The cells, in play order.
    public let frames: [Frame]
    /// Total plays, 0 = forever. Default 0.
    public let loopCount: Int

    /// Makes a sprite-sheet animation.
    ///
    /// - Throws: `ImageCodecError.invalidDimensions` when there are no frames or a cell lies outside the sheet.
    public init(sheet: PixelBuffer, frames: [Frame], loopCount: Int = 0) throws {
        guard !frames.isEmpty else { throw ImageCodecError.invalidDimensions(width: sheet.width, height: 0) }
        for frame in frames {
            let r = frame.rect
            guard r.x >= 0, r.y >= 0, r.width > 0, r.height > 0,
                  r.x <= sheet.width - r.width, r.y <= sheet.height - r.height else {
                throw ImageCodecError.invalidDimensions(width: r.width, height: r.height)
            }
        }
        self.sheet = sheet
        self.frames = frames
        self.loopCount = loopCount
    }

    /// Number of cells.
    public var animatedFrameCount: Int { frames.count }
    /// `loopCount`.
    public var animatedLoopCount: Int { loopCount }
    /// 0: every frame shares the one sheet, so buffering more frames costs nothing extra.
    public var animatedBytesPerFrame: Int { 0 }
    /// The whole sheet (shared, not copied).
    public func animatedFrame(at index: Int) -> PixelBuffer? { frames.indices.contains(index) ? sheet : nil }
    /// The cell's duration.
    public func animatedDuration(at index: Int) -> Double { frames.indices.contains(index) ? frames[index].duration : 0 }
    /// The cell's rectangle in the sheet.
    public func animatedContentsRect(at index: Int) -> PixelRect? { frames.indices.contains(index) ? frames[index].rect : nil }
}
