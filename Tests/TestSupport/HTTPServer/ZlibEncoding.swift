import CWebImageZlib

/// Real gzip / zlib ("deflate") encoding for `HTTPTestServer` and raw-origin tests, through the system zlib.
public enum ZlibEncoding {
    /// Thrown when zlib reports an error (never expected for in-memory input).
    public struct Failure: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { "zlib error \(code)" }
    }

    /// `bytes` in the gzip format (RFC 1952).
    public static func gzip(_ bytes: [UInt8]) throws -> [UInt8] { try deflate(bytes, windowBits: 15 + 16) }

    /// `bytes` in the zlib format (RFC 1950), which HTTP calls `deflate`.
    public static func zlib(_ bytes: [UInt8]) throws -> [UInt8] { try deflate(bytes, windowBits: 15) }

    /// Wraps `deflateInit2_` / `deflate` / `deflateEnd` in one pass over `bytes`.
    private static func deflate(_ bytes: [UInt8], windowBits: Int32) throws -> [UInt8] {
        var stream = z_stream()
        var status = deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8,
                                   Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw Failure(code: status) }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        var input = bytes
        status = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return CWebImageZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(code: status) }
        output.removeLast(Int(stream.avail_out))
        return output
    }
}

/// A zlib deflate stream over zeros, for `HTTPTestResponse.zeroBomb`: compresses input it never holds (a
/// zero-filled scratch buffer is fed again and again).
///
/// Not thread-safe; used on one event loop. Not Sendable.
final class ZlibStreamDeflater {
    private var stream = z_stream()
    private var isOpen = false
    private var isFinished = false
    private var zeros = [UInt8](repeating: 0, count: 1 << 20)
    private var output = [UInt8](repeating: 0, count: 1 << 16)

    init(gzip: Bool) {
        isOpen = deflateInit2_(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, gzip ? 15 + 16 : 15, 9, Z_DEFAULT_STRATEGY,
                               zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if isOpen { deflateEnd(&stream) }
    }

    /// Compresses `count` more zero bytes (and the stream's end when `finish`); returns the compressed bytes
    /// produced (possibly none yet), or nil once finished or on a zlib error.
    func compressZeros(_ count: Int, finish: Bool) -> [UInt8]? {
        guard isOpen, !isFinished else { return nil }
        var produced: [UInt8] = []
        var left = count
        repeat {
            let piece = min(left, zeros.count)
            left -= piece
            let flush = finish && left == 0 ? Z_FINISH : Z_NO_FLUSH
            var status = Z_OK
            zeros.withUnsafeMutableBufferPointer { input in
                stream.next_in = input.baseAddress
                stream.avail_in = uInt(piece)
                repeat {
                    output.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        status = deflate(&stream, flush)
                        produced += out[0..<(out.count - Int(stream.avail_out))]
                    }
                } while stream.avail_out == 0 || (flush == Z_FINISH && status == Z_OK)
            }
            if status == Z_STREAM_END { isFinished = true }
            else if status != Z_OK && status != Z_BUF_ERROR { isOpen = false; deflateEnd(&stream); return nil }
        } while left > 0
        return produced
    }
}
