internal import CWebImageAVIF
import Foundation
import ImageCodec

/// Encodes AVIF stills and sequences through libavif (`avifEncoderAddImage`, `avifEncoderFinish`) with its
/// default AV1 encoder. Registered by `AVIFCodec.register()` only when `AVIFCodec.isEncodingAvailable`.
///
/// `EncodeOptions.quality` maps to libavif's quantizers (1.0 → 0, 0.0 → 63); `isLossless` uses quantizer 0
/// and 4:4:4. Speed 8 (libavif's fast end; a server encodes on demand). 8-bit 4:2:0 otherwise.
///
/// - Important: Stateless and thread-safe.
public struct AVIFEncoder: ImageEncoding {
    /// Makes the encoder.
    public init() {}

    /// The codec's name in errors and logs.
    public var name: String { "libavif" }
    /// The formats this codec handles (`ImageCodecRegistry` matches on the sniffed format).
    public var formats: [ImageFormat] { [.avif] }
    /// What this codec can do: stills, animations, incremental data.
    public var capabilities: ImageCodecCapabilities { [.still, .animation] }

    /// Encodes `frames` (one for a still) with `loopCount` (0 = forever) and `options`. Thread-safe.
    public func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data {
        guard let encoder = avifEncoderCreate() else { throw ImageCodecError.encodingFailed(format: .avif, message: "avifEncoderCreate") }
        defer { avifEncoderDestroy(encoder) }
        let quantizer = options.isLossless ? 0 : Int32((1 - min(max(options.quality, 0), 1)) * 63)
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = options.isLossless ? 0 : min(quantizer, 10)
        encoder.pointee.maxQuantizerAlpha = options.isLossless ? 0 : min(quantizer, 10)
        encoder.pointee.speed = 8
        encoder.pointee.timescale = 1000
        let first = frames[0].buffer
        for frame in frames {
            guard frame.buffer.width == first.width, frame.buffer.height == first.height else {
                throw ImageCodecError.encodingFailed(format: .avif, message: "frames of different sizes")
            }
            guard let image = avifImageCreate(UInt32(first.width), UInt32(first.height), 8,
                                              options.isLossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420) else {
                throw ImageCodecError.encodingFailed(format: .avif, message: "avifImageCreate")
            }
            defer { avifImageDestroy(image) }
            if options.isLossless { image.pointee.matrixCoefficients = avifMatrixCoefficients(AVIF_MATRIX_COEFFICIENTS_IDENTITY) }
            let straight = frame.buffer.converted(to: .rgba8)
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, image)
            rgb.depth = 8
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.rowBytes = UInt32(straight.bytesPerRow)
            let converted = straight.withUnsafeBytes { pixels -> avifResult in
                rgb.pixels = UnsafeMutablePointer(mutating: pixels.baseAddress?.assumingMemoryBound(to: UInt8.self))
                return avifImageRGBToYUV(image, &rgb)
            }
            try check(converted)
            let duration = UInt64(max(1, (frame.duration * 1000).rounded()))
            let flags = frames.count == 1 ? avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue) : avifAddImageFlags(0)
            try check(avifEncoderAddImage(encoder, image, duration, flags))
        }
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        try check(avifEncoderFinish(encoder, &output))
        guard let bytes = output.data else { throw ImageCodecError.encodingFailed(format: .avif, message: "no output") }
        return Data(bytes: bytes, count: output.size)
    }

    private func check(_ result: avifResult) throws {
        guard result == AVIF_RESULT_OK else {
            throw ImageCodecError.encodingFailed(format: .avif, message: String(cString: avifResultToString(result)))
        }
    }
}
