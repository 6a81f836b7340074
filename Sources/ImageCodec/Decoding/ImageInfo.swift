/// What an image's header says, read without decoding pixels (`ImageDecoder.info(_:)`).
///
/// - Important: A value type; thread-safe.
public struct ImageInfo: Sendable, Hashable {
    /// The container format.
    public var format: ImageFormat
    /// Canvas width in pixels, as stored (before orientation).
    public var width: Int
    /// Canvas height in pixels, as stored (before orientation).
    public var height: Int
    /// Number of frames (1 for a still image).
    public var frameCount: Int
    /// Total plays, 0 = forever, 1 for still images (see `Image.loopCount` for the per-format mapping).
    public var loopCount: Int
    /// The loop count as stored in the file, `nil` when absent.
    public var storedLoopCount: Int?
    /// Whether the image may have non-opaque pixels.
    public var hasAlpha: Bool
    /// Progressive JPEG, or interlaced PNG/GIF.
    public var isProgressive: Bool
    /// EXIF orientation (`.up` when absent).
    public var orientation: ImageOrientation
    /// Whether the file has an EXIF orientation tag at all.
    public var hasOrientationTag: Bool
    /// Display duration of each frame in seconds (browser rule applied); `[0]` for a still image.
    public var durations: [Double]

    /// Makes an info value.
    public init(format: ImageFormat, width: Int, height: Int, frameCount: Int = 1, loopCount: Int = 1,
                storedLoopCount: Int? = nil, hasAlpha: Bool, isProgressive: Bool = false,
                orientation: ImageOrientation = .up, hasOrientationTag: Bool = false, durations: [Double]? = nil) {
        self.format = format
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.loopCount = loopCount
        self.storedLoopCount = storedLoopCount
        self.hasAlpha = hasAlpha
        self.isProgressive = isProgressive
        self.orientation = orientation
        self.hasOrientationTag = hasOrientationTag
        self.durations = durations ?? [Double](repeating: 0, count: max(frameCount, 1))
    }
}
