/// Applies an EXIF orientation to pixels so they show upright (a small exact transform for the JPEG decoder).
///
/// - Important: Stateless and thread-safe. Allocates one new buffer (none for `.up`).
enum JPEGOrientation {
    /// `buffer` transformed by `orientation`: width and height swap for orientations 5–8.
    static func apply(_ orientation: ImageOrientation, to buffer: PixelBuffer) throws -> PixelBuffer {
        guard orientation != .up else { return buffer }
        let (w, h) = (buffer.width, buffer.height)
        let (ow, oh) = orientation.swapsDimensions ? (h, w) : (w, h)
        var out = try PixelBuffer(width: ow, height: oh, pixelFormat: buffer.pixelFormat)
        let outStride = out.bytesPerRow
        buffer.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                let srcWords = src.baseAddress!
                let dstWords = dst.baseAddress!
                for y in 0..<h {
                    for x in 0..<w {
                        // Where source pixel (x, y) lands when shown upright.
                        let (dx, dy): (Int, Int)
                        switch orientation {
                        case .up: (dx, dy) = (x, y)
                        case .upMirrored: (dx, dy) = (w - 1 - x, y)
                        case .down: (dx, dy) = (w - 1 - x, h - 1 - y)
                        case .downMirrored: (dx, dy) = (x, h - 1 - y)
                        case .leftMirrored: (dx, dy) = (y, x)
                        case .right: (dx, dy) = (h - 1 - y, x)
                        case .rightMirrored: (dx, dy) = (h - 1 - y, w - 1 - x)
                        case .left: (dx, dy) = (y, w - 1 - x)
                        }
                        let value = srcWords.loadUnaligned(fromByteOffset: y * buffer.bytesPerRow + x * 4, as: UInt32.self)
                        dstWords.storeBytes(of: value, toByteOffset: dy * outStride + dx * 4, as: UInt32.self)
                    }
                }
            }
        }
        return out
    }
}

extension ImageOrientation {
    /// `buffer` turned upright: the stored pixels transformed as this orientation says (width and height swap
    /// for orientations 5–8). Returns `buffer` itself for `.up`.
    ///
    /// ```swift
    /// let upright = try image.orientation.upright(image.firstFrame.buffer)
    /// ```
    /// - Important: Thread-safe; O(pixels), allocates one buffer.
    public func upright(_ buffer: PixelBuffer) throws -> PixelBuffer {
        try JPEGOrientation.apply(self, to: buffer)
    }
}
