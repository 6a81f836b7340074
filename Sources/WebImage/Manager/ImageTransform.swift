import Foundation
import ImageCodec

/// A transform applied to a decoded image before it is cached in memory and delivered (e.g. round corners,
/// a watermark, a crop), with an identifier that keeps transformed images apart in the memory cache.
///
/// ```swift
/// let square = ImageTransform(id: "square-256") { image, _ in
///     let side = min(image.width, image.height)
///     guard let cropped = try? image.firstFrame.buffer.cropped(x: 0, y: 0, width: side, height: side) else { return nil }
///     return Image(buffer: cropped, format: image.format)
/// }
/// ```
///
/// - Important: `apply` runs on an image queue; it must be thread-safe.
public struct ImageTransform: Sendable {
    /// Distinguishes this transform's output in the memory cache (the disk keeps the original bytes).
    public let id: String
    /// Returns the transformed image, or `nil` to fail the request with `.transformFailed`.
    public let apply: @Sendable (Image, URL) -> Image?

    /// Makes a transform.
    public init(id: String, apply: @escaping @Sendable (Image, URL) -> Image?) {
        self.id = id
        self.apply = apply
    }
}
