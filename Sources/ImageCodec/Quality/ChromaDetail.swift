internal import CWebImageCodecShims

/// What 4:2:0 chroma subsampling alone does to an image: its chroma averaged over 2×2 blocks and brought back to
/// full size (the triangle "fancy" upsampling of libjpeg-turbo's decoder), luma untouched. Scored against the
/// original, it is the best a 4:2:0 encoder (JPEG 4:2:0, lossy WebP) can reach on this image at any quality:
/// automatic quality uses it to choose JPEG's subsampling and to see when lossy WebP cannot reach a target.
///
/// - Important: Stateless and thread-safe; three passes over the pixels (C), one buffer of the image's size and
///   its scratch (two chroma planes of a quarter of it, each chroma row blended at full width: 1.5 floats a
///   pixel).
enum ChromaDetail {
    /// `buffer` with its chroma subsampled 4:2:0 and upsampled again (BT.601 full-range YCbCr, as JPEG's).
    /// The pixels are made by `wi_chroma_420_roundtrip` (C: the Swift loop was ~2 ms of a scored JPEG request).
    static func subsampled(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let w = buffer.width, h = buffer.height
        let scratchCount = wi_chroma_420_scratch_count(w, h)
        // Not zeroed: every byte of every row (no padding) is written below.
        var out = try PixelBuffer(width: w, height: h, pixelFormat: buffer.pixelFormat, zeroed: false)
        let outStride = out.bytesPerRow
        let premultiplied: Int32 = buffer.pixelFormat == .rgba8Premultiplied ? 1 : 0
        buffer.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                // Scratch not zero-filled here: the C clears what it accumulates into and writes the rest.
                _ = [Float](unsafeUninitializedCapacity: scratchCount) { floats, initialized in
                    wi_chroma_420_roundtrip(src.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.bytesPerRow,
                                            dst.baseAddress?.assumingMemoryBound(to: UInt8.self), outStride, w, h,
                                            premultiplied, floats.baseAddress)
                    initialized = scratchCount
                }
            }
        }
        return out
    }
}
