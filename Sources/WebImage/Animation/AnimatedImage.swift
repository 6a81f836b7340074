import ImageCodec

/// Something an `AnimatedImagePlayer` can play: frames with durations and a loop count (YYAnimatedImage).
///
/// `Image` conforms (GIF, APNG, animated WebP decoded by `ImageCodec`), and so do `SpriteSheetImage` and
/// `FrameImage`.
/// Conform your own type to play frames from anywhere (a video decoder, a procedural animation).
///
/// - Important: Conforming types must be thread-safe: the player asks for frames on its background
///   buffering worker while its ticker reads durations on another thread.
public protocol AnimatedImage: AnyObject, Sendable {
    /// Number of frames (at least 1).
    var animatedFrameCount: Int { get }
    /// Total plays; 0 means forever.
    var animatedLoopCount: Int { get }
    /// Bytes one decoded frame holds, used to size the player's buffer; 0 when unknown (the player then
    /// assumes 1 KB, as YYAnimatedImageView does).
    var animatedBytesPerFrame: Int { get }
    /// The pixels of frame `index`, decoding on demand; `nil` when the frame cannot be decoded (the player
    /// then keeps showing the previous frame).
    func animatedFrame(at index: Int) -> PixelBuffer?
    /// How long frame `index` shows, in seconds. The player applies the browsers' rule on top
    /// (a duration under 0.011 s plays for 0.1 s).
    func animatedDuration(at index: Int) -> Double
    /// The part of the frame's bitmap to show (a sprite sheet's cell); `nil` shows the whole bitmap.
    func animatedContentsRect(at index: Int) -> PixelRect?
}

extension AnimatedImage {
    /// The whole bitmap: default for images that are not sprite sheets.
    public func animatedContentsRect(at index: Int) -> PixelRect? { nil }
}

/// A rectangle in pixel coordinates of a bitmap (origin top-left).
///
/// - Important: A value type; thread-safe.
public struct PixelRect: Sendable, Hashable {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Makes a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
}

/// Decoded images play directly: frames after the first are decoded on demand by the image's own lazy
/// decoder (and not cached inside the image: the player buffers them).
extension Image: AnimatedImage {
    /// `frameCount`.
    public var animatedFrameCount: Int { frameCount }
    /// `loopCount` (total plays, 0 = forever).
    public var animatedLoopCount: Int { loopCount }
    /// `width × height × 4`.
    public var animatedBytesPerFrame: Int { width * height * 4 }
    /// Frame `index`, decoded on demand; `nil` if that frame is broken.
    public func animatedFrame(at index: Int) -> PixelBuffer? {
        do { return try frame(at: index).buffer } catch { return nil }
    }
    /// `duration(at:)`, or 0 for an index out of range.
    public func animatedDuration(at index: Int) -> Double {
        index >= 0 && index < frameCount ? duration(at: index) : 0
    }
}
