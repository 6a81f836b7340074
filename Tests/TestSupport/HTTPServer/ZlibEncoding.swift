import CWebImageZlib

/// Real gzip / zlib ("deflate") encoding for `HTTPTestServer`, through the system zlib.
enum ZlibEncoding {
    /// Thrown when zlib reports an error (never expected for in-memory input).
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { "zlib error \(code)" }
    }

    /// `bytes` in the gzip format (RFC 1952).
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] { try deflate(bytes, windowBits: 15 + 16) }

    /// `bytes` in the zlib format (RFC 1950), which HTTP calls `deflate`.
    static func zlib(_ bytes: [UInt8]) throws -> [UInt8] { try deflate(bytes, windowBits: 15) }

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
