import Foundation
internal import CWebImageCodecShims

/// An incremental libpng decode over data that arrives in pieces (wraps `wi_png_stream_*`, libpng's
/// progressive reader `png_process_data`): each appended chunk is decoded once, into a full-size straight
/// RGBA8 buffer. Non-interlaced files fill rows top to bottom; an Adam7 file gives a coarse full image after
/// each pass (every pixel replicated over its block) and exactly the image after the last. Rows not reached
/// are transparent (zero). The building block of `IncrementalDecoder` for PNG.
///
/// - Important: Not thread-safe; use one session from one thread. `limits` are checked from IHDR before the
///   buffer is allocated.
final class PNGStreamSession {
    /// How far the decode got.
    struct Progress: Equatable {
        /// Row callbacks that carried pixels; grows with every new row (a cheap "anything new?" check).
        var rowsDelivered: Int
        /// 7 for Adam7, 1 otherwise; 0 before the header.
        var passes: Int
        /// Passes fully written (for Adam7 a coarse full image after each); `passes` once complete.
        var passesCompleted: Int
        /// Rows written so far in the current pass (for a non-interlaced file: the rows so far).
        var rowsInPass: Int
        /// IEND was reached.
        var isComplete: Bool
        /// libpng warnings so far. libpng's push reader demotes some errors of its sequential reader to
        /// warnings (a bad zlib checksum after the last row), so a stream with warnings may differ from the
        /// one-shot decode in its verdict.
        var warnings: Int
    }

    /// IHDR facts once read; `nil` before.
    private(set) var header: PNGDecodeSession.Header?
    /// The pixels so far (`nil` before the header): straight RGBA8 (`.rgba8`) when the image has alpha, else
    /// labelled `opaqueFormat` (every decoded pixel is opaque and the rest zero, so the bytes are the same in
    /// both formats and no conversion is needed). Shares storage until the next append writes rows
    /// (copy-on-write).
    private(set) var pixels: PixelBuffer?

    private let stream: OpaquePointer
    private let limits: DecodeLimits
    private let format: ImageFormat
    private let opaqueFormat: PixelBuffer.PixelFormat

    /// Makes a session; `limits` are checked from IHDR before the pixel buffer is allocated. `opaqueFormat`
    /// labels the buffer of an image without alpha (default `.rgba8`).
    init(limits: DecodeLimits, format: ImageFormat = .png, opaqueFormat: PixelBuffer.PixelFormat = .rgba8) throws {
        guard let stream = wi_png_stream_create() else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        self.stream = stream
        self.limits = limits
        self.format = format
        self.opaqueFormat = opaqueFormat
    }

    deinit { wi_png_stream_destroy(stream) }

    /// How far the decode got. O(1).
    var progress: Progress {
        var raw = wi_png_stream_progress()
        wi_png_stream_get_progress(stream, &raw)
        return Progress(rowsDelivered: Int(clamping: raw.rows_delivered), passes: Int(raw.passes),
                        passesCompleted: Int(raw.passes_completed), rowsInPass: Int(raw.rows_in_pass),
                        isComplete: raw.is_complete != 0, warnings: Int(raw.warnings))
    }

    /// Decodes the next bytes. Once IHDR is in, checks `limits` and allocates the (zeroed) buffer before
    /// libpng writes any row.
    ///
    /// - Throws: `limitExceeded`/`invalidDimensions` from the header, `allocationFailed`, or `corruptData`
    ///   with libpng's message; the session is then unusable.
    func append(_ chunk: Data) throws {
        var rest = chunk[...]
        while !rest.isEmpty {
            let consumed = try feed(rest)
            rest = rest.dropFirst(consumed)
            if header == nil, pixels == nil {
                var raw = wi_png_header()
                guard wi_png_stream_header(stream, &raw) != 0 else {
                    // Before IHDR is complete libpng takes every byte; never spin on input it did not take.
                    if consumed == 0 { throw ImageCodecError.corruptData(format: format, message: "libpng took no input") }
                    continue
                }
                let header = PNGDecodeSession.Header(width: Int(raw.width), height: Int(raw.height),
                                                     bitDepth: Int(raw.bit_depth), colorType: Int(raw.color_type),
                                                     isInterlaced: raw.is_interlaced != 0,
                                                     hasTransparency: raw.has_trns != 0)
                try limits.check(width: header.width, height: header.height)
                pixels = try PixelBuffer(width: header.width, height: header.height,
                                         pixelFormat: header.hasAlpha ? .rgba8 : opaqueFormat, zeroed: true)
                self.header = header
            } else if consumed == 0 {
                // libpng takes every byte once the header is in; nothing taken means nothing more will be.
                throw ImageCodecError.corruptData(format: format, message: "libpng took no input")
            }
        }
    }

    private func feed(_ bytes: Data.SubSequence) throws -> Int {
        var consumed = 0
        var message = [CChar](repeating: 0, count: Int(WI_MESSAGE_MAX))
        // Moved out of the property so the buffer is uniquely referenced (no copy) unless an image shares it.
        var buffer = pixels
        pixels = nil
        defer { pixels = buffer }
        let stream = self.stream
        let status: wi_status = bytes.withUnsafeBytes { input in
            let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return message.withUnsafeMutableBufferPointer { text in
                guard let stride = buffer?.bytesPerRow else {
                    return wi_png_stream_feed(stream, base, input.count, nil, 0, &consumed, text.baseAddress)
                }
                return buffer?.withUnsafeMutableBytes { out in
                    wi_png_stream_feed(stream, base, input.count, out.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                       stride, &consumed, text.baseAddress)
                } ?? WI_ERROR
            }
        }
        guard status == WI_OK else {
            if status == WI_NO_MEMORY { throw ImageCodecError.allocationFailed(byteCount: 0) }
            let text = ShimMessage.string(message)
            throw ImageCodecError.corruptData(format: format, message: text.isEmpty ? "libpng error" : text)
        }
        return consumed
    }
}

@available(*, unavailable, message: "PNGStreamSession is not thread-safe; confine it to one owner")
extension PNGStreamSession: Sendable {}
