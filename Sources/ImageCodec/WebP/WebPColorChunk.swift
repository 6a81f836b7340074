internal import CWebImageWebP
import Foundation

/// The `ICCP` chunk of an extended (VP8X) WebP, read through libwebpdemux.
///
/// - Important: Stateless and thread-safe.
enum WebPColorChunk {
    /// The embedded ICC profile, or `nil` when the file has none (or libwebpdemux cannot parse it). Wraps
    /// `WebPDemux`, `WebPDemuxGetI(WEBP_FF_FORMAT_FLAGS)` and `WebPDemuxGetChunk("ICCP")`.
    static func iccProfile(_ bytes: UnsafeRawBufferPointer) -> Data? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count >= 30 else { return nil }
        // Only VP8X files carry chunks: skip the demuxer for simple VP8/VP8L files (the common case).
        guard bytes[12] == 0x56, bytes[13] == 0x50, bytes[14] == 0x38, bytes[15] == 0x58 else { return nil }
        var webpData = WebPData(bytes: base, size: bytes.count)
        guard let demux = WebPDemux(&webpData) else { return nil }
        defer { WebPDemuxDelete(demux) }
        guard WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS) & ICCP_FLAG.rawValue != 0 else { return nil }
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demux, "ICCP", 1, &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let chunk = iterator.chunk.bytes, iterator.chunk.size > 0 else { return nil }
        return Data(bytes: chunk, count: iterator.chunk.size)
    }
}
