internal import CWebImageCodecShims
import Foundation

/// One libjpeg decompression over bytes the caller keeps alive (wraps `wi_jpeg_decoder_*`).
///
/// The decoding steps mirror libjpeg's: `readHeader()`, optionally `setScale(_:_:)`, then
/// `decode(into:bytesPerRow:)`. The downsampled and incremental decoders reuse this type.
///
/// - Important: Not thread-safe; use one session from one thread, inside the lifetime of its bytes.
final class JPEGDecodeSession {
    /// Header facts read by `readHeader()`.
    struct Header {
        var width: Int
        var height: Int
        var components: Int
        var isProgressive: Bool
        var isCMYK: Bool
        /// An Adobe APP14 marker was seen: CMYK is stored inverted (255 = no ink).
        var sawAdobeMarker: Bool

        /// How the decoded pixels hold their colour when left unconverted (`setRawCMYK`) for the colour stage.
        var colorLayout: ColorLayout {
            if isCMYK { return sawAdobeMarker ? .invertedCMYK : .cmyk }
            return components == 1 ? .greyInRGBA : .rgba
        }
    }

    /// The outcome of decoding the pixels.
    struct Outcome {
        /// Rows written.
        var rowsDecoded: Int
        /// libjpeg warnings ("Corrupt JPEG data: …").
        var warnings: Int
        /// The data ended before the image did; the rows past the end are libjpeg's gray fill.
        var isPrematureEnd: Bool
    }

    private let decoder: OpaquePointer

    /// Starts a session over `bytes` (which must stay valid for the session's lifetime).
    init(bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw ImageCodecError.emptyData }
        guard let decoder = wi_jpeg_decoder_create(base.assumingMemoryBound(to: UInt8.self), bytes.count) else {
            throw ImageCodecError.allocationFailed(byteCount: 0)
        }
        self.decoder = decoder
    }

    deinit { wi_jpeg_decoder_destroy(decoder) }

    /// Reads the header (`jpeg_read_header`), keeping APP1 markers for EXIF.
    func readHeader() throws -> Header {
        var header = wi_jpeg_header()
        try Self.check { wi_jpeg_decoder_read_header(decoder, &header, $0) }
        return Header(width: Int(header.width), height: Int(header.height), components: Int(header.components),
                      isProgressive: header.is_progressive != 0,
                      isCMYK: header.color_space == 4 || header.color_space == 5,
                      sawAdobeMarker: header.saw_adobe_marker != 0)
    }

    /// The ICC profile reassembled from the APP2 chunks (wraps `wi_jpeg_decoder_icc_profile`); `nil` when there
    /// is none or its chunks do not add up (logged: the image still decodes, as untagged). After `readHeader()`.
    func iccProfile() -> Data? {
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        var invalid: Int32 = 0
        var message = [CChar](repeating: 0, count: Int(WI_MESSAGE_MAX))
        let status = message.withUnsafeMutableBufferPointer {
            wi_jpeg_decoder_icc_profile(decoder, &bytes, &length, &invalid, $0.baseAddress!)
        }
        guard status == WI_OK else {
            ColorLog.record("JPEG ICC profile unreadable: \(ShimMessage.string(message))")
            return nil
        }
        if invalid != 0 { ColorLog.record("JPEG ICC_PROFILE chunks do not add up: profile ignored") }
        guard let bytes else { return nil }
        // Copied, then freed: `Data(bytesNoCopy:deallocator: .custom)` leaked its deallocator's box for short
        // profiles (FuzzColorProfile's LeakSanitizer report); a profile is at most 4 MiB and read once.
        defer { wi_free(bytes) }
        return Data(bytes: bytes, count: length)
    }

    /// Leaves CMYK/YCCK rows as inks (for a colour transform) instead of the RGBA formula. Before `decode`.
    func setRawCMYK(_ raw: Bool) { wi_jpeg_decoder_set_raw_cmyk(decoder, raw ? 1 : 0) }

    /// The EXIF payload (TIFF header onwards) of the first `Exif` APP1 marker, if any. After `readHeader()`.
    func exifPayload() -> UnsafeRawBufferPointer? {
        var bytes: UnsafePointer<UInt8>?
        var length = 0
        wi_jpeg_decoder_exif(decoder, &bytes, &length)
        guard let bytes, length > 0 else { return nil }
        return UnsafeRawBufferPointer(start: bytes, count: length)
    }

    /// Chooses DCT-domain scaling `numerator/denominator` and returns the output size
    /// (`jpeg_calc_output_dimensions`). Default 1/1 when never called.
    func setScale(_ numerator: Int, _ denominator: Int) throws -> (width: Int, height: Int) {
        guard (1...16).contains(numerator), (1...16).contains(denominator) else {
            throw ImageCodecError.corruptData(format: .jpeg, message: "scale \(numerator)/\(denominator) out of range")
        }
        var width: UInt32 = 0
        var height: UInt32 = 0
        try Self.check { wi_jpeg_decoder_set_scale(decoder, UInt32(numerator), UInt32(denominator), &width, &height, $0) }
        return (Int(width), Int(height))
    }

    /// Decodes every row as opaque RGBA8 into `pixels`, rows `bytesPerRow` apart.
    func decode(into pixels: UnsafeMutableRawPointer, bytesPerRow: Int) throws -> Outcome {
        var rows: UInt32 = 0
        var warnings: UInt32 = 0
        var premature: Int32 = 0
        try Self.check {
            wi_jpeg_decoder_decode_rgba(decoder, pixels.assumingMemoryBound(to: UInt8.self), bytesPerRow,
                                        &rows, &warnings, &premature, $0)
        }
        return Outcome(rowsDecoded: Int(rows), warnings: Int(warnings), isPrematureEnd: premature != 0)
    }

    /// Decodes every row as `decode(into:bytesPerRow:)` does (the same pixels), in bands of `bandRows` rows,
    /// calling `bandFinished` with each band's rows once libjpeg has written them (in order, from this thread).
    /// Rows libjpeg could not produce are cleared and handed over last, so every row is handed over exactly once
    /// when this returns; after a throw, the rows handed over are those written before the failure. Wraps
    /// `wi_jpeg_decoder_decode_start`, `_decode_rows` and `_decode_finish`.
    func decode(into pixels: UnsafeMutableRawPointer, bytesPerRow: Int, height: Int, bandRows: Int,
                bandFinished: (Range<Int>) -> Void) throws -> Outcome {
        let base = pixels.assumingMemoryBound(to: UInt8.self)
        try Self.check { wi_jpeg_decoder_decode_start(decoder, bytesPerRow, $0) }
        var done = 0
        while done < height {
            let until = min(height, done + max(1, bandRows))
            var rows: UInt32 = 0
            try Self.check { wi_jpeg_decoder_decode_rows(decoder, base, bytesPerRow, UInt32(until), &rows, $0) }
            let reached = min(Int(rows), height)
            if reached > done {
                bandFinished(done..<reached)
                done = reached
            }
            if reached < until { break }  // libjpeg gave up: the rest is cleared by finish
        }
        var warnings: UInt32 = 0
        var premature: Int32 = 0
        try Self.check { wi_jpeg_decoder_decode_finish(decoder, base, bytesPerRow, &warnings, &premature, $0) }
        let decoded = done
        if decoded < height { bandFinished(decoded..<height) }
        return Outcome(rowsDecoded: decoded, warnings: Int(warnings), isPrematureEnd: premature != 0)
    }

    /// Runs a shim call with a message buffer and turns a failure into `ImageCodecError.corruptData`.
    private static func check(_ call: (UnsafeMutablePointer<CChar>) -> wi_status) throws {
        var message = [CChar](repeating: 0, count: Int(WI_MESSAGE_MAX))
        let status = message.withUnsafeMutableBufferPointer { call($0.baseAddress!) }
        guard status == WI_OK else {
            let text = ShimMessage.string(message)
            if status == WI_NO_MEMORY { throw ImageCodecError.allocationFailed(byteCount: 0) }
            if status == WI_LIMIT_EXCEEDED { throw DecodeLimits.scanLimitExceeded }
            throw ImageCodecError.corruptData(format: .jpeg, message: text.isEmpty ? "libjpeg error" : text)
        }
    }
}
