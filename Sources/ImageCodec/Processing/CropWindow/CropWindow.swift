/// How `PixelBuffer.cropWindow(width:height:strategy:)` places a window of a given size in an image.
///
/// ```swift
/// let origin = photo.cropWindow(width: 400, height: 800, strategy: .attention)
/// let kept = try photo.cropped(x: origin.x, y: origin.y, width: 400, height: 800)
/// ```
///
/// - Important: A value type; thread-safe.
public enum CropWindowStrategy: Sendable, Hashable {
    /// The window's origin at a fraction of the slack on each axis (0 = left/top, 0.5 = centred, 1 = right/bottom):
    /// the fixed anchors (`north` is `(0.5, 0)`). Values outside 0…1 (and NaN) are clamped (NaN counts as 0.5).
    case fractions(x: Double, y: Double)
    /// Keeps the point (`x`, `y`), in 0…1 of the image's width and height, as near the window's centre as the
    /// image allows (the window slides until it meets an edge). Values outside 0…1 (and NaN) are clamped as above.
    case focalPoint(x: Double, y: Double)
    /// The window of greatest luma entropy (libvips' `entropy`): on a downscale of at most 128 pixels a side,
    /// strips of the lower entropy are cut from either end of each axis until the window fits.
    case entropy
    /// The window of greatest attention (libvips' `attention` strategy): on a downscale of at most 48 pixels a
    /// side, a map of edges (the luma Laplacian), skin tones and saturation (CIELAB chroma), dark areas ignored
    /// for the last two; the window (of the crop's size on that grid) with the highest sum, by a summed-area
    /// table. Ties go to the window nearest the centre, so a flat image gets the centre crop.
    case attention
}

extension PixelBuffer {
    /// The origin of the `width × height` window that `strategy` keeps of this image, in this buffer's pixels.
    ///
    /// A window larger than the image on an axis is cut to the image's size on that axis (origin 0 there).
    /// Only reads pixels; `.attention` and `.entropy` read each pixel once (a box downscale) and work on the small
    /// grid after that (a few hundred kilobytes at most).
    ///
    /// - Important: O(pixels) for `.attention` and `.entropy`, O(1) otherwise; pure, thread-safe; never traps
    ///   (a non-positive window size counts as 1).
    public func cropWindow(width: Int, height: Int, strategy: CropWindowStrategy) -> (x: Int, y: Int) {
        let w = min(max(width, 1), self.width), h = min(max(height, 1), self.height)
        if w == self.width && h == self.height { return (0, 0) }
        switch strategy {
        case .fractions(let fx, let fy):
            return (Self.origin(fraction: fx, window: w, size: self.width), Self.origin(fraction: fy, window: h, size: self.height))
        case .focalPoint(let fx, let fy):
            return (Self.origin(centre: Self.clampedFraction(fx) * Double(self.width), window: w, size: self.width),
                    Self.origin(centre: Self.clampedFraction(fy) * Double(self.height), window: h, size: self.height))
        case .entropy:
            let grid = CropGrid(self, maxSide: CropGrid.entropySide)
            let centre = grid.entropyCentre(windowWidth: Double(w) / grid.scaleX, windowHeight: Double(h) / grid.scaleY)
            return (Self.origin(centre: centre.x * grid.scaleX, window: w, size: self.width),
                    Self.origin(centre: centre.y * grid.scaleY, window: h, size: self.height))
        case .attention:
            let grid = CropGrid(self, maxSide: CropGrid.attentionSide)
            let centre = AttentionMap(grid).bestWindowCentre(windowWidth: Double(w) / grid.scaleX,
                                                             windowHeight: Double(h) / grid.scaleY)
            return (Self.origin(centre: centre.x * grid.scaleX, window: w, size: self.width),
                    Self.origin(centre: centre.y * grid.scaleY, window: h, size: self.height))
        }
    }

    static func clampedFraction(_ f: Double) -> Double { f.isNaN ? 0.5 : min(max(f, 0), 1) }

    /// The origin at `fraction` of the slack, rounded down (the centre of an odd slack is the one `(size - window) / 2`
    /// gave before gravities: centred results keep their bytes).
    static func origin(fraction: Double, window: Int, size: Int) -> Int {
        let slack = size - window
        return min(max(Int((clampedFraction(fraction) * Double(slack)).rounded(.down)), 0), slack)
    }

    /// The origin that puts the window's centre nearest `centre`, inside the image.
    static func origin(centre: Double, window: Int, size: Int) -> Int {
        let ideal = centre - Double(window) / 2
        guard ideal.isFinite else { return (size - window) / 2 }
        return Int(min(max(ideal.rounded(), 0), Double(size - window)))
    }
}
