/// The still thumbnail of an animation's first frame (APNG, animated WebP) made without a canvas-sized
/// buffer: the frame, decoded at its own size, is placed at its offset on a transparent canvas that exists
/// only as a `BoxAccumulator` grid (O(thumbnail)), then resized exactly (Lanczos3), as GIF's thumbnail does.
///
/// Why: a 140-byte animation may declare an 8000 × 8000 canvas around two 1 × 1 frames. Compositing at canvas
/// size (libwebp's `WebPAnimDecoder` keeps two such canvases, plus our copy) cost 732 MiB for a 256-pixel
/// thumbnail; this costs the first frame plus the grid. Close to, not bit-identical with, compositing at full
/// size and resizing (box prefilter, then Lanczos3).
///
/// - Important: Stateless and thread-safe.
enum FirstFrameThumbnail {
    /// `frame` (straight RGBA8 at its own size) at (`x`, `y`) on a transparent `plan.sourceWidth ×
    /// plan.sourceHeight` canvas, fitted to `plan`'s size, in `format`. Pixels outside the canvas are clipped.
    ///
    /// - Throws: `limitExceeded` for a grid over `limits`, `allocationFailed`.
    static func make(frame: PixelBuffer, x: Int, y: Int, plan: DownsamplePlan, limits: DecodeLimits,
                     format: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        precondition(frame.pixelFormat == .rgba8, "the first frame is decoded straight")
        let accumulator = try BoxAccumulator(sourceWidth: plan.sourceWidth, sourceHeight: plan.sourceHeight,
                                             targetWidth: plan.width, targetHeight: plan.height, limits: limits)
        let stride = frame.bytesPerRow
        frame.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for row in 0..<frame.height {
                accumulator.addStraightPixels(y: y + row, x0: x, pixels: base + row * stride, count: frame.width)
            }
        }
        return try accumulator.makeBuffer().resized(width: plan.width, height: plan.height).converted(to: format)
    }
}
