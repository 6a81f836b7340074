import Foundation

/// The codecs `ImageDecoder`, `IncrementalDecoder`, `ImageEncoder` and `Image.encoded(as:)` go through
/// (SDWebImage's `SDImageCodersManager`, Nuke's `ImageDecoderRegistry`).
///
/// The built-in codecs (JPEG, PNG, APNG, GIF, WebP) are registered first, as the default set; codecs
/// registered later are tried first. A decoder is picked by the sniffed format and the context (complete
/// data or not, `ImageDecoding.canDecode(_:context:)`); when it throws, the next matching one is tried, and if
/// every one throws, the most telling error is reported (a limit over a corrupt-data verdict over "not
/// supported"; between equals, the higher-priority codec's).
///
/// ```swift
/// AVIFCodec.register()                                   // an optional module, into `.shared`
/// let token = ImageCodecRegistry.shared.register(decoder: MyDecoder())
/// ImageCodecRegistry.shared.unregister(token)
/// ```
///
/// - Important: Thread-safe: register, unregister and decode from any thread. Codec code is never called
///   under the registry's lock (a lookup copies the list, then calls the codecs).
public final class ImageCodecRegistry: Sendable {
    /// The registry the library uses. It starts with the built-in codecs.
    public static let shared = ImageCodecRegistry()

    private struct Entry<Codec>: Sendable where Codec: Sendable {
        let id: Int
        let codec: Codec
    }

    private struct State {
        var nextID = 1
        /// Lowest priority first (so the list is walked backwards).
        var decoders: [Entry<any ImageDecoding>] = []
        var encoders: [Entry<any ImageEncoding>] = []
    }

    private let state = Mutex(State())

    /// Makes a registry holding the built-in codecs (`includesBuiltIns`, default `true`) or nothing.
    public init(includesBuiltIns: Bool = true) {
        if includesBuiltIns {
            for decoder in BuiltInDecoder.all { register(decoder: decoder) }
            register(encoder: BuiltInEncoder())
        }
    }

    /// Registers `decoder` with the highest priority (tried before every codec registered before it).
    /// - Returns: a token for `unregister(_:)`.
    @discardableResult
    public func register(decoder: any ImageDecoding) -> ImageCodecRegistration {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.decoders.append(Entry(id: state.nextID, codec: decoder))
            return ImageCodecRegistration(id: state.nextID)
        }
    }

    /// Registers `encoder` with the highest priority.
    /// - Returns: a token for `unregister(_:)`.
    @discardableResult
    public func register(encoder: any ImageEncoding) -> ImageCodecRegistration {
        state.withLock { state in
            defer { state.nextID += 1 }
            state.encoders.append(Entry(id: state.nextID, codec: encoder))
            return ImageCodecRegistration(id: state.nextID)
        }
    }

    /// Removes the codec registered with `registration`; nothing when it is already gone.
    public func unregister(_ registration: ImageCodecRegistration) {
        // The removed codec is released after unlocking (its deinit is codec code).
        let removed: (decoders: [Entry<any ImageDecoding>], encoders: [Entry<any ImageEncoding>]) = state.withLock { state in
            let decoders = state.decoders.filter { $0.id == registration.id }
            let encoders = state.encoders.filter { $0.id == registration.id }
            state.decoders.removeAll { $0.id == registration.id }
            state.encoders.removeAll { $0.id == registration.id }
            return (decoders, encoders)
        }
        _ = removed
    }

    /// The decoders, highest priority first.
    public var decoders: [any ImageDecoding] { state.withLock { $0.decoders.reversed().map(\.codec) } }
    /// The encoders, highest priority first.
    public var encoders: [any ImageEncoding] { state.withLock { $0.encoders.reversed().map(\.codec) } }

    /// Whether some decoder handles complete data of `format`.
    public func canDecode(_ format: ImageFormat) -> Bool {
        decoders.contains { $0.formats.contains(format) }
    }

    /// Whether some encoder writes `frameCount` frames as `format`.
    public func canEncode(_ format: ImageFormat, frameCount: Int = 1) -> Bool {
        encoders.contains { $0.canEncode(format, frameCount: frameCount) }
    }

    /// MIME types of the registered decoders of formats the built-in set does not decode, highest priority
    /// first, without repeats (`image/avif`, `image/jxl`, …): what the manager adds to its `Accept` header.
    public var additionalMIMETypes: [String] {
        let builtIn = Set(BuiltInDecoder.all.flatMap(\.mimeTypes))
        var seen = Set<String>(), types: [String] = []
        for decoder in decoders where !(decoder is BuiltInDecoder) {
            for type in decoder.mimeTypes where !builtIn.contains(type) && seen.insert(type).inserted { types.append(type) }
        }
        return types
    }

    /// The decoders that take `data` in `context`, highest priority first.
    public func decoders(for data: Data, context: ImageDecodingContext) -> [any ImageDecoding] {
        decoders.filter { $0.canDecode(data, context: context) }
    }

    /// Decodes complete `data` with the first matching decoder that succeeds.
    ///
    /// - Throws: `ImageCodecError`: `.emptyData`, `.unknownFormat` / `.unsupportedFormat` when no decoder
    ///   takes the data, otherwise the most telling error of the decoders that tried.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        try firstSuccess(data) { try $0.decode(data, options: options) }
    }

    /// Reads the header facts of complete `data` with the first matching decoder that succeeds.
    public func info(_ data: Data) throws -> ImageInfo {
        try firstSuccess(data) { try $0.info(data) }
    }

    /// Encodes `frames` as `format` with the first matching encoder that succeeds.
    ///
    /// - Throws: `ImageCodecError.unsupportedEncoding` when no encoder writes `format` (for this many
    ///   frames), `.deadlineExceeded` as soon as an encoder stops at `options.deadline`, otherwise the most
    ///   telling error of the encoders that tried.
    public func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int = 0,
                       options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard !frames.isEmpty else { throw ImageCodecError.encodingFailed(format: format, message: "no frames") }
        let candidates = encoders.filter { $0.canEncode(format, frameCount: frames.count) }
        guard !candidates.isEmpty else { throw ImageCodecError.unsupportedEncoding(format) }
        var best: ImageCodecError?
        for encoder in candidates {
            do { return try encoder.encode(frames, format: format, loopCount: loopCount, options: options) } catch {
                // Past the deadline, the next encoder would be stopped as well: give up at once.
                if case .deadlineExceeded = error as? ImageCodecError { throw error }
                best = Self.moreTelling(best, Self.codecError(error, format: format, codec: encoder.name, encoding: true))
            }
        }
        throw best ?? ImageCodecError.unsupportedEncoding(format)
    }

    private func firstSuccess<T>(_ data: Data, _ body: (any ImageDecoding) throws -> T) throws -> T {
        guard !data.isEmpty else { throw ImageCodecError.emptyData }
        let format = ImageFormat.sniff(data)
        let candidates = decoders(for: data, context: ImageDecodingContext(format: format, isComplete: true))
        guard !candidates.isEmpty else {
            throw format == .unknown ? ImageCodecError.unknownFormat : ImageCodecError.unsupportedFormat(format)
        }
        var best: ImageCodecError?
        for decoder in candidates {
            do { return try body(decoder) } catch {
                best = Self.moreTelling(best, Self.codecError(error, format: format, codec: decoder.name, encoding: false))
            }
        }
        throw best ?? ImageCodecError.unsupportedFormat(format)
    }

    /// A codec's error as an `ImageCodecError` (another error type keeps its text, with the codec's name).
    static func codecError(_ error: any Error, format: ImageFormat, codec: String, encoding: Bool) -> ImageCodecError {
        if let error = error as? ImageCodecError { return error }
        let message = "\(codec): \(error)"
        return encoding ? .encodingFailed(format: format, message: message) : .corruptData(format: format, message: message)
    }

    /// The more telling of two errors; `current` (a higher-priority codec's) wins a tie.
    static func moreTelling(_ current: ImageCodecError?, _ new: ImageCodecError) -> ImageCodecError {
        guard let current else { return new }
        return rank(new) > rank(current) ? new : current
    }

    private static func rank(_ error: ImageCodecError) -> Int {
        switch error {
        case .deadlineExceeded: return 4
        case .limitExceeded, .allocationFailed: return 3
        case .truncated, .corruptData, .invalidDimensions, .encodingFailed, .frameIndexOutOfRange: return 2
        case .emptyData: return 1
        case .unknownFormat, .unsupportedFormat, .unsupportedEncoding: return 0
        }
    }
}

/// A token for removing a registered codec (`ImageCodecRegistry.unregister(_:)`).
///
/// - Important: A value type; thread-safe.
public struct ImageCodecRegistration: Sendable, Hashable {
    let id: Int
}
