/// The blur schedule of YYWebImage's `.progressiveBlur`: a partial progressive JPEG or interlaced PNG is
/// shown blurred, less and less as data arrives, and sharp when complete.
///
/// ```swift
/// let r = ProgressiveBlur.radius(receivedBytes: 40_000, expectedBytes: 200_000, displayCount: 2)
/// let shown = try partial.firstFrame.buffer.blurred(radius: r)
/// ```
///
/// - Important: Pure functions; thread-safe.
public enum ProgressiveBlur {
    /// The blur radius (σ in pixels, for `PixelBuffer.blurred(radius:)`) for a partial image.
    ///
    /// With a known size, YYWebImage's curve: `32 × (1 / (3p + 0.6) − 0.25)` where `p` is the fraction
    /// received (about 45 at the start, 12 at a third, 7.2 at half, 1.7 at 90 %, 0.9 when complete). Without one,
    /// `32 / displayCount` (the n-th partial image shown gets 32/n). Never negative.
    ///
    /// - Parameters:
    ///   - expectedBytes: the `Content-Length`, or `nil`/non-positive when unknown.
    ///   - displayCount: how many partial images have been shown, counting this one (at least 1).
    public static func radius(receivedBytes: Int, expectedBytes: Int?, displayCount: Int) -> Double {
        if let expected = expectedBytes, expected > 0 {
            let p = min(1, max(0, Double(receivedBytes) / Double(expected)))
            return max(0, 32 * (1 / (3 * p + 0.6) - 0.25))
        }
        return 32 / Double(max(1, displayCount))
    }
}
