import Foundation

/// One of the built-in decoders (JPEG, PNG, APNG, GIF, WebP) as a registry entry. `IncrementalDecoder`
/// keeps its own library streams for these (progressive JPEG scans, libpng's push reader, `WebPIAppend`),
/// so they declare `.incremental` and make no session.
///
/// - Important: A value type; thread-safe.
struct BuiltInDecoder: ImageDecoding {
    let format: ImageFormat

    static let all: [BuiltInDecoder] = [.jpeg, .png, .apng, .gif, .webp].map(BuiltInDecoder.init(format:))

    var name: String { "built-in \(format)" }
    var formats: [ImageFormat] { [format] }
    var capabilities: ImageCodecCapabilities {
        switch format {
        case .jpeg, .png: return [.still, .incremental]
        default: return [.still, .animation, .incremental]
        }
    }

    func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        switch format {
        case .jpeg: return try JPEGDecoder.decode(data, options: options)
        case .png: return try PNGDecoder.decode(data, options: options)
        case .apng: return try APNGDecoder.decode(data, options: options)
        case .gif: return try GIFDecoder.decode(data, options: options)
        case .webp: return try WebPDecoder.decode(data, options: options)
        default: throw ImageCodecError.unsupportedFormat(format)
        }
    }

    func info(_ data: Data) throws -> ImageInfo {
        switch format {
        case .jpeg: return try JPEGDecoder.info(data)
        case .png: return try PNGDecoder.info(data)
        case .apng: return try APNGDecoder.info(data)
        case .gif: return try GIFDecoder.info(data)
        case .webp: return try WebPDecoder.info(data)
        default: throw ImageCodecError.unsupportedFormat(format)
        }
    }
}

/// The built-in encoders (JPEG, PNG, APNG, GIF, WebP) as one registry entry.
///
/// - Important: A value type; thread-safe.
struct BuiltInEncoder: ImageEncoding {
    var name: String { "built-in" }
    var formats: [ImageFormat] { [.jpeg, .png, .apng, .gif, .webp] }
    var capabilities: ImageCodecCapabilities { [.still, .animation] }

    func canEncode(_ format: ImageFormat, frameCount: Int) -> Bool {
        formats.contains(format) && (format != .jpeg || frameCount == 1)
    }

    func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data {
        try ImageEncoder.encodeBuiltIn(frames, format: format, loopCount: loopCount, options: options)
    }
}
