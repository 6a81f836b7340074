import Foundation

extension PixelBuffer {
    /// A clockwise quarter-turn rotation.
    ///
    /// - Important: A value type; thread-safe.
    public enum Rotation: Int, Sendable, Hashable, CaseIterable {
        /// 90° clockwise: the top row becomes the right column. Swaps width and height.
        case clockwise90 = 90
        /// 180°: upside down.
        case clockwise180 = 180
        /// 270° clockwise (90° counter-clockwise): the top row becomes the left column. Swaps width and height.
        case clockwise270 = 270
    }

    /// This image rotated clockwise by `rotation`. O(pixels); pure, thread-safe.
    ///
    /// - Throws: `ImageCodecError.allocationFailed`.
    public func rotated(by rotation: Rotation) throws -> PixelBuffer {
        let (w, h) = (width, height)
        switch rotation {
        case .clockwise90: // out(x, y) = in(y, h - 1 - x)
            return try remapped(PixelRemap(width: h, height: w, originX: 0, originY: h - 1,
                                           xStepX: 0, xStepY: -1, yStepX: 1, yStepY: 0))
        case .clockwise180: // out(x, y) = in(w - 1 - x, h - 1 - y)
            return try remapped(PixelRemap(width: w, height: h, originX: w - 1, originY: h - 1,
                                           xStepX: -1, xStepY: 0, yStepX: 0, yStepY: -1))
        case .clockwise270: // out(x, y) = in(w - 1 - y, x)
            return try remapped(PixelRemap(width: h, height: w, originX: w - 1, originY: 0,
                                           xStepX: 0, xStepY: 1, yStepX: -1, yStepY: 0))
        }
    }

    /// This image mirrored left-right. O(pixels); pure, thread-safe.
    ///
    /// - Throws: `ImageCodecError.allocationFailed`.
    public func flippedHorizontally() throws -> PixelBuffer {
        try remapped(PixelRemap(width: width, height: height, originX: width - 1, originY: 0,
                                xStepX: -1, xStepY: 0, yStepX: 0, yStepY: 1))
    }

    /// This image mirrored top-bottom. O(pixels); pure, thread-safe.
    ///
    /// - Throws: `ImageCodecError.allocationFailed`.
    public func flippedVertically() throws -> PixelBuffer {
        try remapped(PixelRemap(width: width, height: height, originX: 0, originY: height - 1,
                                xStepX: 1, xStepY: 0, yStepX: 0, yStepY: -1))
    }

    /// The upright image for pixels stored with EXIF `orientation`: what a viewer shows.
    ///
    /// The EXIF meaning (TIFF 6.0 tag 0x0112) names where the stored 0th row and 0th column appear:
    ///
    /// | value | stored row 0 / column 0 shown at | transform applied here |
    /// |---|---|---|
    /// | 1 `.up` | top / left | none (returns `self`) |
    /// | 2 `.upMirrored` | top / right | flip left-right |
    /// | 3 `.down` | bottom / right | rotate 180° |
    /// | 4 `.downMirrored` | bottom / left | flip top-bottom |
    /// | 5 `.leftMirrored` | left / top | transpose (mirror on the top-left diagonal) |
    /// | 6 `.right` | right / top | rotate 90° clockwise |
    /// | 7 `.rightMirrored` | right / bottom | transverse (mirror on the top-right diagonal) |
    /// | 8 `.left` | left / bottom | rotate 90° counter-clockwise |
    ///
    /// Orientations 5–8 swap width and height. A phone photo held upright is usually stored sideways with
    /// orientation 6.
    ///
    /// - Throws: `ImageCodecError.allocationFailed`.
    /// - Important: O(pixels); pure, thread-safe.
    public func applyingOrientation(_ orientation: ImageOrientation) throws -> PixelBuffer {
        let (w, h) = (width, height)
        switch orientation {
        case .up:
            return self
        case .upMirrored:
            return try flippedHorizontally()
        case .down:
            return try rotated(by: .clockwise180)
        case .downMirrored:
            return try flippedVertically()
        case .leftMirrored: // out(x, y) = in(y, x)
            return try remapped(PixelRemap(width: h, height: w, originX: 0, originY: 0,
                                           xStepX: 0, xStepY: 1, yStepX: 1, yStepY: 0))
        case .right:
            return try rotated(by: .clockwise90)
        case .rightMirrored: // out(x, y) = in(w - 1 - y, h - 1 - x)
            return try remapped(PixelRemap(width: h, height: w, originX: w - 1, originY: h - 1,
                                           xStepX: 0, xStepY: -1, yStepX: -1, yStepY: 0))
        case .left:
            return try rotated(by: .clockwise270)
        }
    }
}
