internal import CWebImageWebP
import Foundation

/// libwebp's incremental decoder for a still WebP (wraps `WebPINewRGB`, `WebPIAppend`, `WebPIDecGetRGB`):
/// bytes are appended as they arrive and the rows decoded so far can be read at any time.
///
/// - Important: Not thread-safe; owned by one `IncrementalDecoder`.
final class WebPIncrementalSession {
    let width: Int
    let height: Int
    private let decoder: OpaquePointer
    private let pixelFormat: PixelBuffer.PixelFormat

    /// A session when `data` (the bytes so far) holds a still WebP's header; `nil` while more bytes are needed
    /// or for an animation (those wait for the final data). Wraps `WebPGetFeatures`; checks `limits`.
    static func make(_ data: Data, pixelFormat: PixelBuffer.PixelFormat, limits: DecodeLimits) throws -> WebPIncrementalSession? {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { bytes -> VP8StatusCode in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return VP8_STATUS_NOT_ENOUGH_DATA }
            return WebPGetFeatures(base, bytes.count, &features)
        }
        guard status == VP8_STATUS_OK, features.has_animation == 0 else { return nil }
        try limits.check(width: Int(features.width), height: Int(features.height))
        let mode = pixelFormat == .rgba8Premultiplied ? MODE_rgbA : MODE_RGBA
        guard let decoder = WebPINewRGB(mode, nil, 0, 0) else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        return WebPIncrementalSession(decoder: decoder, width: Int(features.width), height: Int(features.height),
                                      pixelFormat: pixelFormat)
    }

    private init(decoder: OpaquePointer, width: Int, height: Int, pixelFormat: PixelBuffer.PixelFormat) {
        self.decoder = decoder
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
    }

    deinit { WebPIDelete(decoder) }

    /// Appends bytes (`WebPIAppend`); throws for a bitstream error (not for missing data).
    func append(_ chunk: Data) throws {
        let status = chunk.withUnsafeBytes { bytes -> VP8StatusCode in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return VP8_STATUS_SUSPENDED }
            return WebPIAppend(decoder, base, bytes.count)
        }
        guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else {
            throw ImageCodecError.corruptData(format: .webp, message: "WebPIAppend status \(status.rawValue)")
        }
    }

    /// The rows decoded so far (`WebPIDecGetRGB`), the rest transparent; `nil` before the first row.
    func rowsSoFar() throws -> PixelBuffer? {
        var lastY: Int32 = 0, w: Int32 = 0, h: Int32 = 0, stride: Int32 = 0
        guard let rows = WebPIDecGetRGB(decoder, &lastY, &w, &h, &stride), lastY > 0,
              Int(w) == width, Int(h) == height, Int(stride) >= width * 4 else { return nil }
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: pixelFormat)
        let rowBytes = width * 4
        let destinationStride = buffer.bytesPerRow
        buffer.withUnsafeMutableBytes { out in
            guard let base = out.baseAddress else { return }
            for y in 0..<min(Int(lastY), height) {
                (base + y * destinationStride).copyMemory(from: rows + y * Int(stride), byteCount: rowBytes)
            }
        }
        return buffer
    }
}
