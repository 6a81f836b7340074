/// What 4:2:0 chroma subsampling alone does to an image: its chroma averaged over 2×2 blocks and brought back to
/// full size (the triangle "fancy" upsampling of libjpeg-turbo's decoder), luma untouched. Scored against the
/// original, it is the best a 4:2:0 encoder (JPEG 4:2:0, lossy WebP) can reach on this image at any quality:
/// automatic quality uses it to choose JPEG's subsampling and to see when lossy WebP cannot reach a target.
///
/// - Important: Stateless and thread-safe; one pass over the pixels, one buffer of the image's size.
enum ChromaDetail {
    /// `buffer` with its chroma subsampled 4:2:0 and upsampled again (BT.601 full-range YCbCr, as JPEG's).
    static func subsampled(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let w = buffer.width, h = buffer.height
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var cb = [Float](repeating: 0, count: cw * ch), cr = cb
        var counts = [Float](repeating: 0, count: cw * ch)
        var out = try PixelBuffer(width: w, height: h, pixelFormat: buffer.pixelFormat)
        let outStride = out.bytesPerRow
        buffer.withUnsafeBytes { src in
            for y in 0..<h {
                for x in 0..<w {
                    let p = y * buffer.bytesPerRow + x * 4
                    let r = Float(src[p]), g = Float(src[p + 1]), b = Float(src[p + 2])
                    let i = (y / 2) * cw + x / 2
                    cb[i] += -0.168736 * r - 0.331264 * g + 0.5 * b
                    cr[i] += 0.5 * r - 0.418688 * g - 0.081312 * b
                    counts[i] += 1
                }
            }
            for i in 0..<(cw * ch) {
                cb[i] /= counts[i]
                cr[i] /= counts[i]
            }
            // Chroma sample (i, j) sits at pixel centre (2i + 0.5, 2j + 0.5): each pixel takes 3/4 of its own
            // block and 1/4 of the neighbouring one on each axis (edges repeat).
            func sample(_ plane: [Float], _ x: Int, _ y: Int) -> Float {
                let i = x / 2, j = y / 2
                let ni = min(cw - 1, max(0, x % 2 == 0 ? i - 1 : i + 1))
                let nj = min(ch - 1, max(0, y % 2 == 0 ? j - 1 : j + 1))
                let a = plane[j * cw + i] * 0.75 + plane[j * cw + ni] * 0.25
                let b = plane[nj * cw + i] * 0.75 + plane[nj * cw + ni] * 0.25
                return a * 0.75 + b * 0.25
            }
            out.withUnsafeMutableBytes { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        let p = y * buffer.bytesPerRow + x * 4
                        let q = y * outStride + x * 4
                        let r = Float(src[p]), g = Float(src[p + 1]), b = Float(src[p + 2])
                        let luma = 0.299 * r + 0.587 * g + 0.114 * b
                        let u = sample(cb, x, y), v = sample(cr, x, y)
                        func byte(_ value: Float) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }
                        var rr = luma + 1.402 * v, gg = luma - 0.344136 * u - 0.714136 * v, bb = luma + 1.772 * u
                        // Premultiplied pixels stay within their alpha.
                        if buffer.pixelFormat == .rgba8Premultiplied {
                            let a = Float(src[p + 3])
                            (rr, gg, bb) = (min(rr, a), min(gg, a), min(bb, a))
                        }
                        dst[q] = byte(rr)
                        dst[q + 1] = byte(gg)
                        dst[q + 2] = byte(bb)
                        dst[q + 3] = src[p + 3]
                    }
                }
            }
        }
        return out
    }
}
