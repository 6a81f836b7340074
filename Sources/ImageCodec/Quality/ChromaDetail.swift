/// How much colour detail 4:2:0 chroma subsampling would blur: the mean absolute difference between each pixel's
/// chroma (BT.601 Cb and Cr, 0…255) and the mean of its 2×2 block, which is what 4:2:0 keeps.
///
/// - Important: Stateless and thread-safe; one pass over the pixels.
enum ChromaDetail {
    /// Above this mean deviation (in 8-bit chroma levels) 4:4:4 pays for its bytes: measured on the shared corpus
    /// at 400×300 (scripts/quality), photographs sit below it and graphics with coloured text or lines above.
    static let fullChromaThreshold = 2.0

    /// Whether `buffer`'s chroma detail is over `fullChromaThreshold`.
    static func prefersFullChroma(_ buffer: PixelBuffer) -> Bool {
        deviation(buffer) > fullChromaThreshold
    }

    /// The mean deviation of Cb and Cr from their 2×2 block means (0 for a 1-pixel image).
    static func deviation(_ buffer: PixelBuffer) -> Double {
        let w = buffer.width / 2 * 2, h = buffer.height / 2 * 2
        guard w > 0, h > 0 else { return 0 }
        var total = 0.0
        buffer.withUnsafeBytes { bytes in
            func chroma(_ x: Int, _ y: Int) -> SIMD2<Float> {
                let p = y * buffer.bytesPerRow + x * 4
                let r = Float(bytes[p]), g = Float(bytes[p + 1]), b = Float(bytes[p + 2])
                return SIMD2(-0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b)
            }
            for y in stride(from: 0, to: h, by: 2) {
                var row: Float = 0
                for x in stride(from: 0, to: w, by: 2) {
                    let a = chroma(x, y), b = chroma(x + 1, y), c = chroma(x, y + 1), d = chroma(x + 1, y + 1)
                    let mean: SIMD2<Float> = (a + b + c + d) * 0.25
                    for v in [a, b, c, d] {
                        let e: SIMD2<Float> = v - mean
                        row += Swift.abs(e.x) + Swift.abs(e.y)
                    }
                }
                total += Double(row)
            }
        }
        return total / Double(w * h * 2)
    }
}
