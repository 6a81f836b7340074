import Foundation
import Synchronization

/// A decoded image: one frame, or an animation whose frames are decoded eagerly or on demand.
///
/// The first frame is always decoded (YYImage's rule); other frames of an animation come from an
/// `ImageFrameSource` when first asked for, unless the image was decoded with all frames preloaded.
///
/// ```swift
/// let image = try ImageDecoder.decode(data)
/// print(image.format, image.width, image.height, image.frameCount)
/// let pixels = image.firstFrame.buffer
/// ```
///
/// - Important: Immutable after creation except for its internal frame cache; thread-safe.
public final class Image: Sendable {
    /// The container format the image was decoded from (`.unknown` for images made from pixels).
    public let format: ImageFormat
    /// Width in pixels of the canvas, as stored (before applying `orientation`).
    public let width: Int
    /// Height in pixels of the canvas, as stored (before applying `orientation`).
    public let height: Int
    /// Points-to-pixels scale (e.g. 2 for `@2x` assets). Default 1.
    public let scale: Double
    /// EXIF orientation. `.up` when the file has none.
    public let orientation: ImageOrientation
    /// How many times the animation plays in total; 0 means forever. 1 for still images.
    ///
    /// APNG `num_plays` and WebP `loop_count` are already total plays (0 = forever). GIF stores repeats:
    /// no NETSCAPE2.0 extension plays once (1); a stored 0 is forever (0); a stored n > 0 plays n + 1 times,
    /// as browsers do. `storedLoopCount` keeps the raw value.
    public let loopCount: Int
    /// The loop count exactly as stored in the file (`nil` when absent, e.g. a GIF without NETSCAPE2.0).
    public let storedLoopCount: Int?
    /// Whether any pixel may be non-opaque (from the header: alpha channel, tRNS, GIF transparency).
    public let hasAlpha: Bool
    /// Whether the file is a progressive JPEG or an interlaced PNG/GIF.
    public let isProgressive: Bool
    /// Whether the data ended early and the missing part of the image is blank (libjpeg's "premature end"
    /// case). The image is still usable.
    public let isPartial: Bool
    /// The encoded bytes, when the decoder was asked to keep them (needed to re-encode animations without
    /// loss and for caching originals). `nil` otherwise.
    public let originalData: Data?
    /// Pixel format of every frame: `.rgba8Premultiplied` when decoded for display.
    public let pixelFormat: PixelBuffer.PixelFormat
    /// What the source file said about its colours (ICC profile bytes, CICP, PNG gamma…), whatever the decoder
    /// did with it; `nil` for an untagged file and for images made from pixels.
    public let colorSpace: ImageColorSpace?
    /// The ICC profile the pixels are in when they are not sRGB: the source's profile for
    /// `ColorManagement.preserve`, the target's for `.target`. `nil` (the default) means sRGB pixels. Encoders
    /// (`encoded(as:)`) embed it; sRGB pixels are written without a profile.
    public let pixelICCProfile: Data?

    private let firstFrameStorage: ImageFrame
    private let source: ImageFrameSource?
    private let durations: [Double]
    private let frameCache: Mutex<[Int: PixelBuffer]>

    /// Whether pixels are premultiplied RGBA8, ready to draw.
    public var isDecodedForDisplay: Bool { pixelFormat == .rgba8Premultiplied }
    /// Number of frames (1 for a still image).
    public var frameCount: Int { durations.count }
    /// Whether the image has more than one frame.
    public var isAnimated: Bool { frameCount > 1 }
    /// The first frame, always decoded.
    public var firstFrame: ImageFrame { firstFrameStorage }
    /// Total duration of one loop, in seconds (0 for a still image).
    public var totalDuration: Double { durations.reduce(0, +) }
    /// Bytes of pixels held now (first frame plus frames decoded and cached so far). Not O(1): takes a lock.
    public var decodedByteCount: Int {
        firstFrameStorage.buffer.byteCount + frameCache.withLock { $0.values.reduce(0) { $0 + $1.byteCount } }
    }

    /// Makes a still image from pixels.
    public convenience init(buffer: PixelBuffer, format: ImageFormat = .unknown, scale: Double = 1,
                            orientation: ImageOrientation = .up, originalData: Data? = nil) {
        self.init(frames: [ImageFrame(buffer: buffer)], format: format, loopCount: 1, storedLoopCount: nil,
                  hasAlpha: !buffer.isOpaque, scale: scale, orientation: orientation, originalData: originalData)
    }

    /// Makes an image from fully decoded frames (all the same size as the first).
    /// `colorSpace` and `pixelICCProfile` default to `nil` (untagged source, sRGB pixels).
    ///
    /// - Precondition: `frames` is not empty.
    public init(frames: [ImageFrame], format: ImageFormat, loopCount: Int, storedLoopCount: Int? = nil,
                hasAlpha: Bool, isProgressive: Bool = false, isPartial: Bool = false, scale: Double = 1,
                orientation: ImageOrientation = .up, originalData: Data? = nil, colorSpace: ImageColorSpace? = nil,
                pixelICCProfile: Data? = nil) {
        precondition(!frames.isEmpty, "an Image needs at least one frame")
        self.colorSpace = colorSpace
        self.pixelICCProfile = pixelICCProfile
        self.format = format
        self.width = frames[0].buffer.width
        self.height = frames[0].buffer.height
        self.scale = scale
        self.orientation = orientation
        self.loopCount = loopCount
        self.storedLoopCount = storedLoopCount
        self.hasAlpha = hasAlpha
        self.isProgressive = isProgressive
        self.isPartial = isPartial
        self.originalData = originalData
        self.pixelFormat = frames[0].buffer.pixelFormat
        self.firstFrameStorage = frames[0]
        self.source = nil
        self.durations = frames.map(\.duration)
        var cache: [Int: PixelBuffer] = [:]
        for i in frames.indices.dropFirst() { cache[i] = frames[i].buffer }
        self.frameCache = Mutex(cache)
    }

    /// Makes an animated image whose frames after the first are decoded on demand from `source`.
    public init(firstFrame: ImageFrame, source: ImageFrameSource, format: ImageFormat, loopCount: Int,
                storedLoopCount: Int?, hasAlpha: Bool, isProgressive: Bool = false, scale: Double = 1,
                originalData: Data? = nil, colorSpace: ImageColorSpace? = nil, pixelICCProfile: Data? = nil) {
        self.colorSpace = colorSpace
        self.pixelICCProfile = pixelICCProfile
        self.format = format
        self.width = firstFrame.buffer.width
        self.height = firstFrame.buffer.height
        self.scale = scale
        self.orientation = .up
        self.loopCount = loopCount
        self.storedLoopCount = storedLoopCount
        self.hasAlpha = hasAlpha
        self.isProgressive = isProgressive
        self.isPartial = false
        self.originalData = originalData
        self.pixelFormat = firstFrame.buffer.pixelFormat
        self.firstFrameStorage = firstFrame
        self.source = source
        self.durations = (0..<source.frameCount).map { source.duration(at: $0) }
        self.frameCache = Mutex([:])
    }

    /// Display duration of frame `index` in seconds (0 for a still image).
    ///
    /// - Precondition: `index` is in `0..<frameCount`.
    public func duration(at index: Int) -> Double { durations[index] }

    /// Frame `index`, decoding it on demand for a lazily decoded animation.
    ///
    /// - Parameter caching: keep the decoded frame in this image (default `false`: a player buffers frames
    ///   itself, and an animation's frames together may be large).
    /// - Throws: `ImageCodecError.frameIndexOutOfRange`, or the decoder's error for a broken frame.
    /// - Important: Thread-safe; may decode (CPU, no I/O) on the calling thread.
    public func frame(at index: Int, caching: Bool = false) throws -> ImageFrame {
        guard index >= 0, index < frameCount else {
            throw ImageCodecError.frameIndexOutOfRange(index: index, frameCount: frameCount)
        }
        if index == 0 { return firstFrameStorage }
        if let cached = frameCache.withLock({ $0[index] }) {
            return ImageFrame(buffer: cached, duration: durations[index])
        }
        guard let source else { throw ImageCodecError.frameIndexOutOfRange(index: index, frameCount: frameCount) }
        let buffer = try source.decodeFrame(at: index, pixelFormat: pixelFormat)
        if caching { frameCache.withLock { $0[index] = buffer } }
        return ImageFrame(buffer: buffer, duration: durations[index])
    }

    /// Every frame, decoding those not yet decoded (and caching them in this image).
    public func allFrames() throws -> [ImageFrame] {
        try (0..<frameCount).map { try frame(at: $0, caching: true) }
    }
}
