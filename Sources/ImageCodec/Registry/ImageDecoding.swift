import Foundation

/// A decoder that can be registered in an `ImageCodecRegistry` (SDWebImage's `SDImageCoder`, Nuke's
/// `ImageDecoding`): it declares its formats and capabilities, and decodes complete data.
///
/// ```swift
/// struct TinyDecoder: ImageDecoding {
///     var formats: [ImageFormat] { [.bmp] }
///     var capabilities: ImageCodecCapabilities { .still }
///     func decode(_ data: Data, options: DecodeOptions) throws -> Image { … }
///     func info(_ data: Data) throws -> ImageInfo { … }
/// }
/// ImageCodecRegistry.shared.register(decoder: TinyDecoder())
/// ```
///
/// - Important: Implementations must be thread-safe: the registry calls them from any thread, concurrently.
///   They should throw `ImageCodecError` (anything else is reported as `.corruptData` with its text), check
///   `options.limits` before allocating, and never trap on any input.
public protocol ImageDecoding: Sendable {
    /// A short name for logs and errors (e.g. `"libavif"`). Default: the type's name.
    var name: String { get }
    /// The sniffed formats this decoder handles. A decoder of a format of its own lists none (or `.unknown`)
    /// and recognises its data in `canDecode(_:context:)`.
    var formats: [ImageFormat] { get }
    /// Whether it decodes stills, animations, and incomplete data.
    var capabilities: ImageCodecCapabilities { get }
    /// MIME types it decodes, added to the manager's default `Accept` header. Default: the formats' MIME types.
    var mimeTypes: [String] { get }
    /// Whether it takes these bytes in this context. Default: `formats` contains `context.format`, and for
    /// incomplete data the decoder has the `.incremental` capability.
    ///
    /// - Important: Called often and under no lock: keep it cheap (look at the first bytes only).
    func canDecode(_ data: Data, context: ImageDecodingContext) -> Bool
    /// Decodes complete data.
    ///
    /// - Throws: `ImageCodecError` (`.limitExceeded` before allocating, `.truncated`, `.corruptData`, …).
    func decode(_ data: Data, options: DecodeOptions) throws -> Image
    /// Reads the header facts without decoding pixels.
    func info(_ data: Data) throws -> ImageInfo
    /// A session that makes partial images while data arrives, or `nil` (default) when it cannot.
    func makeIncrementalDecoder(options: DecodeOptions) -> (any IncrementalImageDecoding)?
    /// Bytes the decode of `data` with `options` allocates for its colour stage beside the bitmap it returns
    /// (e.g. a 16-bit temporary of 8 bytes a pixel when a 10/12-bit source is converted before it is reduced
    /// to 8 bits), read from the headers before decoding; `ImageDecoder.colorTemporaryByteCount(of:options:)`
    /// asks the decoder that takes the data, for memory budgets (`DecodeBudget`). Default: 0.
    ///
    /// - Important: Called from any thread, before the decode: parse headers only, never decode pixels.
    func colorTemporaryByteCount(of data: Data, options: DecodeOptions) -> Int
}

extension ImageDecoding {
    /// The type's name.
    public var name: String { String(describing: type(of: self)) }
    /// The formats' MIME types (none for `.unknown`).
    public var mimeTypes: [String] { formats.filter { $0 != .unknown }.map(\.mimeType) }
    /// `formats` contains `context.format`; incomplete data needs `.incremental`.
    public func canDecode(_ data: Data, context: ImageDecodingContext) -> Bool {
        formats.contains(context.format) && (context.isComplete || capabilities.contains(.incremental))
    }
    /// No incremental session.
    public func makeIncrementalDecoder(options: DecodeOptions) -> (any IncrementalImageDecoding)? { nil }
    /// No colour temporary.
    public func colorTemporaryByteCount(of data: Data, options: DecodeOptions) -> Int { 0 }
}

/// A decoding session for one download, made by `ImageDecoding.makeIncrementalDecoder(options:)` and driven
/// by `IncrementalDecoder` to show partial images. The final image always comes from the registry's
/// one-shot decode of the complete data.
///
/// - Important: Not thread-safe: `IncrementalDecoder` calls it from its owner's thread or serial queue.
public protocol IncrementalImageDecoding: AnyObject {
    /// Takes the bytes received so far (all of them, not only the new ones; the first bytes are the same as
    /// last time). Do not keep a reference to `data`: the caller appends to it (a kept reference makes every
    /// append copy it).
    func update(_ data: Data, isFinal: Bool)
    /// The best partial image so far, or `nil` when nothing can be shown yet.
    func makeImage() throws -> Image?
}

/// An encoder that can be registered in an `ImageCodecRegistry` (SDWebImage's `SDImageCoder` encode half).
///
/// - Important: Implementations must be thread-safe.
public protocol ImageEncoding: Sendable {
    /// A short name for logs and errors. Default: the type's name.
    var name: String { get }
    /// The formats it writes.
    var formats: [ImageFormat] { get }
    /// `.still` and/or `.animation`.
    var capabilities: ImageCodecCapabilities { get }
    /// Whether it writes `frameCount` frames as `format`. Default: `formats` contains `format` and the
    /// capabilities include `.animation` for more than one frame (`.still` for one).
    func canEncode(_ format: ImageFormat, frameCount: Int) -> Bool
    /// Encodes frames (straight or premultiplied RGBA, all the same size) as `format`.
    ///
    /// - Throws: `ImageCodecError.encodingFailed` or `.unsupportedEncoding`.
    func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data
}

extension ImageEncoding {
    /// The type's name.
    public var name: String { String(describing: type(of: self)) }

    /// `formats` contains `format`; more than one frame needs `.animation`, one needs `.still`.
    public func canEncode(_ format: ImageFormat, frameCount: Int) -> Bool {
        formats.contains(format) && capabilities.contains(frameCount > 1 ? .animation : .still)
    }
}
