import Foundation
internal import CWebImageCodecShims

/// An incremental libjpeg decode over data that arrives in pieces (wraps `wi_jpeg_stream_*`): progressive
/// files render a full image after each completed scan (libjpeg's buffered-image mode); baseline
/// (single-scan) files render the rows the data so far holds, continuing where the previous render stopped
/// (`jpeg_read_scanlines` over a suspending source), so each row is decoded once. Rows not yet decoded are
/// left untouched in the caller's buffer (the incremental decoder zeroes it: transparent). The building block
/// of the incremental decoder.
///
/// - Important: Not thread-safe; use one session from one thread.
final class JPEGStreamSession {
    /// What `render(into:bytesPerRow:)` did.
    struct Progress {
        /// Whether new pixels were written.
        var didRender: Bool
        /// Whether the whole image is decoded (the session is finished).
        var isComplete: Bool
        /// Scans shown in the pixels so far.
        var scansRendered: Int
        /// Rows holding decoded pixels: baseline, the rows so far (never decreases); progressive, the height
        /// once a scan was rendered.
        var rowsDecoded: Int
    }

    private let stream: OpaquePointer
    private(set) var header: JPEGDecodeSession.Header?
    private(set) var outputSize: (width: Int, height: Int)?

    init() throws {
        guard let stream = wi_jpeg_stream_create() else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        self.stream = stream
    }

    deinit { wi_jpeg_stream_destroy(stream) }

    /// Appends the next bytes; `isFinal` marks the end of the data.
    func append(_ data: Data, isFinal: Bool) throws {
        _ = try data.withUnsafeBytes { bytes in
            try Self.check {
                wi_jpeg_stream_append(stream, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                                      isFinal ? 1 : 0, $0)
            }
        }
    }

    /// Reads the header and starts decompression as soon as the data allows; `false` while more data is needed.
    /// `limits` are checked from the header before decompression allocates anything.
    func prepare(limits: DecodeLimits = .default) throws -> Bool {
        if header == nil {
            var raw = wi_jpeg_header()
            guard try Self.check({ wi_jpeg_stream_read_header(stream, &raw, $0) }) else { return false }
            header = JPEGDecodeSession.Header(width: Int(raw.width), height: Int(raw.height), components: Int(raw.components),
                                              isProgressive: raw.is_progressive != 0,
                                              isCMYK: raw.color_space == 4 || raw.color_space == 5,
                                              sawAdobeMarker: raw.saw_adobe_marker != 0)
        }
        if let header, outputSize == nil { try limits.check(width: header.width, height: header.height) }
        if outputSize == nil {
            var width: UInt32 = 0
            var height: UInt32 = 0
            guard try Self.check({ wi_jpeg_stream_start(stream, &width, &height, $0) }) else { return false }
            outputSize = (Int(width), Int(height))
        }
        return true
    }

    /// libjpeg warnings so far (corrupt data it recovered from; recovery may depend on where the input
    /// suspended, so a stream with warnings is not trusted to equal a one-shot decode). O(1).
    var warnings: Int { Int(wi_jpeg_stream_warnings(stream)) }

    /// Rows holding decoded pixels (see `Progress.rowsDecoded`). O(1).
    var rowsDecoded: Int { Int(wi_jpeg_stream_rows_decoded(stream)) }

    /// Consumes the data so far and renders the newest completed scan into `pixels` when there is one; for a
    /// baseline file, reads the new rows into `pixels`, which must be the same buffer (holding the earlier
    /// rows) every time.
    func render(into pixels: UnsafeMutableRawPointer, bytesPerRow: Int) throws -> Progress {
        var rendered: Int32 = 0
        var complete: Int32 = 0
        var scans: UInt32 = 0
        _ = try Self.check {
            wi_jpeg_stream_render(stream, pixels.assumingMemoryBound(to: UInt8.self), bytesPerRow, &rendered, &complete,
                                  &scans, $0)
        }
        return Progress(didRender: rendered != 0, isComplete: complete != 0, scansRendered: Int(scans),
                        rowsDecoded: Int(wi_jpeg_stream_rows_decoded(stream)))
    }

    /// Runs a shim call; `true` for WI_OK, `false` for WI_NEED_DATA, throws for errors.
    private static func check(_ call: (UnsafeMutablePointer<CChar>) -> wi_status) throws -> Bool {
        var message = [CChar](repeating: 0, count: Int(WI_MESSAGE_MAX))
        let status = message.withUnsafeMutableBufferPointer { call($0.baseAddress!) }
        switch status {
        case WI_OK: return true
        case WI_NEED_DATA: return false
        case WI_NO_MEMORY: throw ImageCodecError.allocationFailed(byteCount: 0)
        case WI_LIMIT_EXCEEDED: throw DecodeLimits.scanLimitExceeded
        default:
            let text = ShimMessage.string(message)
            throw ImageCodecError.corruptData(format: .jpeg, message: text.isEmpty ? "libjpeg error" : text)
        }
    }
}
