/// One frame of an image: its pixels (canvas-sized, already composited for animations) and how long it shows.
///
/// - Important: A value type; thread-safe.
public struct ImageFrame: Sendable, Equatable {
    /// The frame's pixels.
    public var buffer: PixelBuffer
    /// Display time in seconds, after the browsers' rule (a stored delay under 0.011 s plays as 0.1 s).
    /// 0 for a still image. Always finite and not negative: NaN and negative values become 0, longer ones
    /// `maximumDuration` (the encoders turn it into whole units of their formats, which trapped on NaN or ∞).
    public var duration: Double {
        get { storedDuration }
        set { storedDuration = newValue.isNaN ? 0 : min(Self.maximumDuration, max(0, newValue)) }
    }
    private var storedDuration = 0.0

    /// The longest a frame's `duration` can be: `Int32.max` milliseconds (about 24.8 days), the most any
    /// encoder's millisecond counter holds (each format clamps further to its own field).
    public static let maximumDuration = Double(Int32.max) / 1000

    /// Makes a frame (`duration` as the property clamps it; default 0).
    public init(buffer: PixelBuffer, duration: Double = 0) {
        self.buffer = buffer
        self.duration = duration
    }

    /// The browsers' rule for animation delays: anything shorter than 0.011 s plays for 0.1 s.
    public static func displayDuration(forStoredDelay seconds: Double) -> Double {
        seconds < 0.011 ? 0.1 : seconds
    }
}

/// EXIF orientation (tag 0x0112): how the stored pixels must be transformed to be shown upright.
///
/// - Important: A value type; thread-safe.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// 1: as stored.
    case up = 1
    /// 2: mirrored left-right.
    case upMirrored = 2
    /// 3: rotated 180°.
    case down = 3
    /// 4: mirrored top-bottom.
    case downMirrored = 4
    /// 5: mirrored along the top-left/bottom-right diagonal (transpose).
    case leftMirrored = 5
    /// 6: must be rotated 90° clockwise to be upright.
    case right = 6
    /// 7: mirrored along the top-right/bottom-left diagonal (transverse).
    case rightMirrored = 7
    /// 8: must be rotated 90° counter-clockwise to be upright.
    case left = 8

    /// Whether showing upright swaps width and height (orientations 5–8).
    public var swapsDimensions: Bool { rawValue >= 5 }
}

/// A lazy source of composited frames for an animated `Image` (YYImage's decoder-behind-the-image).
///
/// Implementations decode frame *i* on demand, compositing from the nearest full frame (a keyframe or a
/// cached canvas) so random access is correct.
///
/// - Important: Implementations must be thread-safe: `Image` calls them from whichever thread asks for a frame.
public protocol ImageFrameSource: AnyObject, Sendable {
    /// Number of frames (at least 1).
    var frameCount: Int { get }
    /// Display duration of frame `index` (browser rule applied), in seconds.
    func duration(at index: Int) -> Double
    /// Decodes and composites frame `index` into a new canvas-sized buffer.
    func decodeFrame(at index: Int, pixelFormat: PixelBuffer.PixelFormat) throws -> PixelBuffer
}
