extension Image {
    /// The longest side the placeholders are computed at: a larger first frame is scaled down to it first.
    static let placeholderSide = 100

    /// The BlurHash of the first frame as displayed (after EXIF orientation), with `components.x × components.y`
    /// components (1…9 each; default 4 × 3, the usual choice).
    ///
    /// ```swift
    /// let hash = try image.blurHash()            // "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
    /// ```
    ///
    /// A frame over 100 pixels a side is scaled to fit 100 × 100 first (BlurHash keeps only the coarsest
    /// variation: the hash of the full frame is the same to within a quantisation step, and this costs
    /// microseconds instead of milliseconds). Use `BlurHash.encode(_:components:)` for a buffer as it is.
    ///
    /// - Throws: `PlaceholderHashError.invalidComponents`; `ImageCodecError.allocationFailed` for the thumbnail.
    /// - Important: Pure, thread-safe; O(frame pixels) for the scaling.
    public func blurHash(components: (x: Int, y: Int) = (x: 4, y: 3)) throws -> String {
        guard (1...9).contains(components.x), (1...9).contains(components.y) else {
            throw PlaceholderHashError.invalidComponents(x: components.x, y: components.y)
        }
        return try BlurHash.encode(placeholderThumbnail(), components: components)
    }

    /// The ThumbHash of the first frame as displayed (after EXIF orientation), scaled to fit 100 × 100 first
    /// (as the reference requires): about 25 bytes; base64 them for JSON or HTML.
    ///
    /// - Throws: `ImageCodecError.allocationFailed` for the thumbnail.
    /// - Important: Pure, thread-safe; O(frame pixels) for the scaling.
    public func thumbHash() throws -> [UInt8] {
        try ThumbHash.encode(placeholderThumbnail())
    }

    /// The first frame scaled to fit `placeholderSide` (when larger), then oriented for display.
    func placeholderThumbnail() throws -> PixelBuffer {
        var buffer = firstFrame.buffer
        if max(buffer.width, buffer.height) > Self.placeholderSide {
            buffer = try buffer.resized(maxPixelSize: Self.placeholderSide)
        }
        return try buffer.applyingOrientation(orientation)
    }
}
