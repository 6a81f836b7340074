import Foundation
import ImageCodec

/// A tiny image format of the tests' own, decoded by a codec registered at run time (`ImageCodecRegistry`).
///
/// Layout: `"TINY"`, width and height (UInt16 big-endian), frame count (UInt8), then per frame its duration in
/// milliseconds (UInt16 big-endian) and `width × height` straight RGBA pixels, rows top to bottom.
/// `ImageFormat.sniff` does not know it (`.unknown`): the decoder recognises its magic in `canDecode`.
///
/// - Important: Thread-safe (stateless).
public struct TinyCodec: ImageDecoding, ImageEncoding {
    /// The MIME type the manager's `Accept` header lists once the codec is registered.
    public static let mimeType = "image/x-tiny"
    static let magic = Array("TINY".utf8)
    static let headerSize = 9

    /// Makes the codec.
    public init() {}

    public var name: String { "tiny" }
    public var formats: [ImageFormat] { [.unknown] }
    public var capabilities: ImageCodecCapabilities { [.still, .animation, .incremental] }
    public var mimeTypes: [String] { [Self.mimeType] }

    public func canDecode(_ data: Data, context: ImageDecodingContext) -> Bool {
        data.prefix(4).elementsEqual(Self.magic)
    }

    public func canEncode(_ format: ImageFormat, frameCount: Int) -> Bool { format == .unknown }

    public func info(_ data: Data) throws -> ImageInfo {
        let header = try Self.header(data)
        return ImageInfo(format: .unknown, width: header.width, height: header.height, frameCount: header.frames,
                         loopCount: 0, hasAlpha: true,
                         durations: (0..<header.frames).map { Self.duration(data, header: header, frame: $0) })
    }

    public func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let header = try Self.header(data)
        try options.limits.check(width: header.width, height: header.height, frameCount: header.frames)
        guard data.count >= header.frameOffset(header.frames) else { throw ImageCodecError.truncated(format: .unknown) }
        let count = options.firstFrameOnly ? 1 : header.frames
        let frames = try (0..<count).map { index in
            ImageFrame(buffer: try Self.pixels(data, header: header, frame: index, rows: header.height)
                .converted(to: options.pixelFormat),
                       duration: count > 1 ? Self.duration(data, header: header, frame: index) : 0)
        }
        return Image(frames: frames, format: .unknown, loopCount: count > 1 ? 0 : 1, hasAlpha: true,
                     originalData: options.keepsOriginalData ? data : nil)
    }

    public func makeIncrementalDecoder(options: DecodeOptions) -> (any IncrementalImageDecoding)? {
        TinyIncrementalSession(options: options)
    }

    public func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data {
        let first = frames[0].buffer
        guard first.width <= 0xFFFF, first.height <= 0xFFFF, frames.count <= 0xFF else {
            throw ImageCodecError.unsupportedEncoding(format)
        }
        var out = Self.magic
        out += [UInt8(first.width >> 8), UInt8(first.width & 0xFF), UInt8(first.height >> 8), UInt8(first.height & 0xFF)]
        out.append(UInt8(frames.count))
        for frame in frames {
            let ms = min(Int(frame.duration * 1000), 0xFFFF)
            out += [UInt8(ms >> 8), UInt8(ms & 0xFF)]
            let straight = frame.buffer.converted(to: .rgba8)
            for y in 0..<straight.height {
                for x in 0..<straight.width {
                    let p = straight.pixel(x: x, y: y)
                    out += [p.r, p.g, p.b, p.a]
                }
            }
        }
        return Data(out)
    }

    struct Header {
        var width: Int, height: Int, frames: Int
        var frameBytes: Int { 2 + width * height * 4 }
        func frameOffset(_ index: Int) -> Int { TinyCodec.headerSize + index * frameBytes }
    }

    static func header(_ data: Data) throws -> Header {
        let bytes = [UInt8](data.prefix(headerSize))
        guard bytes.count == headerSize, bytes.prefix(4).elementsEqual(magic) else {
            throw ImageCodecError.truncated(format: .unknown)
        }
        let header = Header(width: Int(bytes[4]) << 8 | Int(bytes[5]), height: Int(bytes[6]) << 8 | Int(bytes[7]),
                            frames: Int(bytes[8]))
        guard header.width > 0, header.height > 0, header.frames > 0 else {
            throw ImageCodecError.invalidDimensions(width: header.width, height: header.height)
        }
        return header
    }

    static func duration(_ data: Data, header: Header, frame: Int) -> Double {
        let offset = data.startIndex + header.frameOffset(frame)
        guard data.count >= header.frameOffset(frame) + 2 else { return 0 }
        return Double(Int(data[offset]) << 8 | Int(data[offset + 1])) / 1000
    }

    /// Frame `frame`'s first `rows` rows (the others transparent), straight alpha.
    static func pixels(_ data: Data, header: Header, frame: Int, rows: Int) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: header.width, height: header.height, pixelFormat: .rgba8)
        let start = data.startIndex + header.frameOffset(frame) + 2
        let rowBytes = header.width * 4, stride = buffer.bytesPerRow
        buffer.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { raw in
                for y in 0..<rows {
                    let from = start - data.startIndex + y * rowBytes
                    out.baseAddress!.advanced(by: y * stride)
                        .copyMemory(from: raw.baseAddress!.advanced(by: from), byteCount: rowBytes)
                }
            }
        }
        return buffer
    }
}

/// Partial images of a TINY file: the rows of the first frame received so far.
final class TinyIncrementalSession: IncrementalImageDecoding {
    let options: DecodeOptions
    private var rows = 0
    private var header: TinyCodec.Header?
    private var data = Data()
    /// How many partial images it made (tests check the incremental decoder asked it).
    private(set) var imagesMade = 0

    init(options: DecodeOptions) { self.options = options }

    func update(_ data: Data, isFinal: Bool) {
        if header == nil { header = try? TinyCodec.header(data) }  // not enough bytes yet: retried on the next chunk
        guard let header else { return }
        let available = data.count - header.frameOffset(0) - 2
        rows = max(0, min(header.height, available / (header.width * 4)))
        // A copy of the rows so far only (the caller's buffer keeps growing; see `update`'s contract).
        self.data = Data(data.prefix(header.frameOffset(0) + 2 + rows * header.width * 4))
    }

    func makeImage() throws -> Image? {
        guard let header, rows > 0 else { return nil }
        try options.limits.check(width: header.width, height: header.height)
        imagesMade += 1
        let buffer = try TinyCodec.pixels(data, header: header, frame: 0, rows: rows).converted(to: options.pixelFormat)
        return Image(frames: [ImageFrame(buffer: buffer)], format: .unknown, loopCount: 1, hasAlpha: true, isPartial: true)
    }
}
