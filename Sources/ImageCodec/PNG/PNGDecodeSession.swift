internal import CWebImageCodecShims

/// One libpng read over bytes the caller keeps alive (wraps `wi_png_decoder_*`): `readInfo()`, then
/// `decode(into:bytesPerRow:premultiply:)`.
///
/// - Important: Not thread-safe; use one session from one thread, inside the lifetime of its bytes.
final class PNGDecodeSession {
    /// IHDR facts (and whether a tRNS chunk came before IDAT).
    struct Header {
        var width: Int
        var height: Int
        var bitDepth: Int
        var colorType: Int
        var isInterlaced: Bool
        var hasTransparency: Bool
        /// Colour type with alpha (4, 6) or a tRNS chunk.
        var hasAlpha: Bool { colorType & 4 != 0 || hasTransparency }
    }

    private let decoder: OpaquePointer
    private let format: ImageFormat

    /// Starts a session over `bytes` (which must stay valid for the session's lifetime); errors name `format`.
    init(bytes: UnsafeRawBufferPointer, format: ImageFormat = .png) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw ImageCodecError.emptyData }
        guard let decoder = wi_png_decoder_create(base.assumingMemoryBound(to: UInt8.self), bytes.count) else {
            throw ImageCodecError.allocationFailed(byteCount: 0)
        }
        self.decoder = decoder
        self.format = format
    }

    deinit { wi_png_decoder_destroy(decoder) }

    /// Reads the signature and the chunks up to the first IDAT (`png_read_info`).
    func readInfo() throws -> Header {
        var header = wi_png_header()
        try check { wi_png_decoder_read_info(decoder, &header, $0) }
        return Header(width: Int(header.width), height: Int(header.height), bitDepth: Int(header.bit_depth),
                      colorType: Int(header.color_type), isInterlaced: header.is_interlaced != 0,
                      hasTransparency: header.has_trns != 0)
    }

    /// Decodes every row as RGBA8 into `pixels` (rows `bytesPerRow` apart), then reads to IEND.
    func decode(into pixels: UnsafeMutableRawPointer, bytesPerRow: Int, premultiply: Bool) throws {
        try check {
            wi_png_decoder_decode_rgba(decoder, pixels.assumingMemoryBound(to: UInt8.self), bytesPerRow,
                                       premultiply ? 1 : 0, $0)
        }
    }

    /// Decodes a 16-bit PNG as straight native-endian RGBA16 into `pixels` (wraps `wi_png_decoder_decode_rgba16`).
    func decode16(into pixels: UnsafeMutableRawPointer, bytesPerRow: Int) throws {
        try check { wi_png_decoder_decode_rgba16(decoder, pixels.assumingMemoryBound(to: UInt16.self), bytesPerRow, $0) }
    }

    /// Starts row-by-row reading with the RGBA8 transforms; returns the pass count (7 for Adam7, else 1).
    /// Rows come out straight (not premultiplied). For the downsampled decoder (no full-size buffer).
    func startRows() throws -> Int {
        var passes: Int32 = 0
        try check { wi_png_decoder_start_rows(decoder, &passes, $0) }
        return Int(passes)
    }

    /// Reads the next row (`width * 4` bytes); for Adam7, `row` must hold that row's earlier passes.
    func readRow(into row: UnsafeMutableRawPointer) throws {
        try check { wi_png_decoder_read_row(decoder, row.assumingMemoryBound(to: UInt8.self), $0) }
    }

    /// Reads to IEND after the last row.
    func finishRows() throws {
        try check { wi_png_decoder_finish(decoder, $0) }
    }

    private func check(_ call: (UnsafeMutablePointer<CChar>) -> wi_status) throws {
        var message = [CChar](repeating: 0, count: Int(WI_MESSAGE_MAX))
        let status = message.withUnsafeMutableBufferPointer { call($0.baseAddress!) }
        guard status == WI_OK else {
            if status == WI_NO_MEMORY { throw ImageCodecError.allocationFailed(byteCount: 0) }
            let text = ShimMessage.string(message)
            if text.hasPrefix("Read Error: the data ends early") { throw ImageCodecError.truncated(format: format) }
            throw ImageCodecError.corruptData(format: format, message: text.isEmpty ? "libpng error" : text)
        }
    }
}
