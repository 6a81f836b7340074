import Foundation
import ImageCodec

/// An animation made of separate images and their durations (YYFrameImage): bitmaps, encoded images (any
/// format a registered codec decodes) or image files, played in order.
///
/// ```swift
/// let walk = try FrameImage(frames: (1...8).map {
///     .file(URL(fileURLWithPath: "walk-\($0).png"), duration: 0.1)
/// })
/// let player = AnimatedImagePlayer(image: walk)
/// ```
///
/// The first frame is decoded when the image is made (it gives the size); the others when the player asks
/// for them, each time (the player buffers decoded frames; files are read then, on its worker). Every frame
/// is shown at the first frame's size: a frame of another size is resized to it (Lanczos3). A frame that
/// cannot be read or decoded later gives `nil`, and the player keeps showing the previous one. Encoded frames
/// and files show their first frame (an animated GIF as one frame is one still).
///
/// - Important: Immutable; thread-safe.
public final class FrameImage: AnimatedImage {
    /// One frame: where its pixels come from and how long it shows.
    public struct Frame: Sendable {
        /// Where a frame's pixels come from.
        public enum Source: Sendable {
            /// Decoded pixels (kept in memory).
            case pixels(PixelBuffer)
            /// Encoded bytes, decoded on demand through `ImageDecoder` (the codec registry).
            case data(Data)
            /// An image file, read and decoded on demand.
            case file(URL)
        }

        /// Where the pixels come from.
        public var source: Source
        /// How long the frame shows, in seconds.
        public var duration: Double

        /// Makes a frame.
        public init(source: Source, duration: Double) {
            self.source = source
            self.duration = duration
        }

        /// A frame of decoded pixels.
        public static func pixels(_ buffer: PixelBuffer, duration: Double) -> Frame { Frame(source: .pixels(buffer), duration: duration) }
        /// A frame of encoded bytes (decoded on demand).
        public static func data(_ data: Data, duration: Double) -> Frame { Frame(source: .data(data), duration: duration) }
        /// A frame read from an image file on demand.
        public static func file(_ url: URL, duration: Double) -> Frame { Frame(source: .file(url), duration: duration) }
    }

    /// The frames, in play order.
    public let frames: [Frame]
    /// Total plays, 0 = forever. Default 0.
    public let loopCount: Int
    /// How encoded frames are decoded. Default: `DecodeOptions(firstFrameOnly: true, keepsOriginalData: false)`.
    public let options: DecodeOptions
    /// The first frame, decoded; it sets the size of every frame.
    public let firstFrame: PixelBuffer

    /// Makes an animation of `frames`, decoding the first now.
    ///
    /// - Throws: `ImageCodecError.invalidDimensions` without frames, the decoder's `ImageCodecError` for a
    ///   first frame that does not decode, or the file error (with its errno) for a first file that cannot
    ///   be read.
    public init(frames: [Frame], loopCount: Int = 0,
                options: DecodeOptions = DecodeOptions(firstFrameOnly: true, keepsOriginalData: false)) throws {
        guard let first = frames.first else { throw ImageCodecError.invalidDimensions(width: 0, height: 0) }
        self.frames = frames
        self.loopCount = loopCount
        self.options = options
        self.firstFrame = try Self.decode(first.source, options: options)
    }

    /// Number of frames.
    public var animatedFrameCount: Int { frames.count }
    /// `loopCount`.
    public var animatedLoopCount: Int { loopCount }
    /// The first frame's size × 4.
    public var animatedBytesPerFrame: Int { firstFrame.byteCount }

    /// Frame `index`: read and decoded now (not cached), at the first frame's size; `nil` when it cannot be.
    public func animatedFrame(at index: Int) -> PixelBuffer? {
        guard frames.indices.contains(index) else { return nil }
        if index == 0 { return firstFrame }
        do {
            let buffer = try Self.decode(frames[index].source, options: options)
            guard buffer.width != firstFrame.width || buffer.height != firstFrame.height else { return buffer }
            return try buffer.resized(width: firstFrame.width, height: firstFrame.height)
        } catch {
            return nil  // the protocol's answer for a frame that cannot be shown: the player keeps the previous one
        }
    }

    /// The frame's duration.
    public func animatedDuration(at index: Int) -> Double { frames.indices.contains(index) ? frames[index].duration : 0 }

    private static func decode(_ source: Frame.Source, options: DecodeOptions) throws -> PixelBuffer {
        switch source {
        case .pixels(let buffer): return buffer.converted(to: options.pixelFormat)
        case .data(let data): return try ImageDecoder.decode(data, options: options).firstFrame.buffer
        case .file(let url): return try ImageDecoder.decode(try Data(contentsOf: url), options: options).firstFrame.buffer
        }
    }
}
