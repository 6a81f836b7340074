import ImageCodec

/// Which part of the image a `cover` crop keeps (`gravity=` and `fp=` in `/image`, thumbor's `halign`/`valign`,
/// `smart` and `focal()`).
///
/// - Important: A value type; thread-safe.
public enum CropGravity: Sendable, Hashable {
    /// One of the nine fixed anchors (`gravity=center` is the default).
    case anchor(CropAnchor)
    /// The most interesting window by an attention map (edges, saturation, skin tones; libvips' `attention`):
    /// `gravity=smart`, thumbor's `smart`.
    case smart
    /// The window with the most detail by entropy: `gravity=entropy`.
    case entropy
    /// Keep the point (`x`, `y`), in 0…1 of the (oriented) source's width and height, as near the window's centre
    /// as the image allows: `fp=x,y`, thumbor's `focal()`.
    case focalPoint(x: Double, y: Double)

    /// The default: the centre.
    public static let center = CropGravity.anchor(.center)

    /// The spelling in `canonicalProcessing` (part of the result-cache key).
    public var canonicalName: String {
        switch self {
        case .anchor(let anchor): return anchor.rawValue
        case .smart: return "smart"
        case .entropy: return "entropy"
        case .focalPoint(let x, let y): return "fp:\(x),\(y)"
        }
    }

    /// How `PixelBuffer.cropWindow(width:height:strategy:)` places the crop for this gravity.
    public var cropWindowStrategy: CropWindowStrategy {
        switch self {
        case .anchor(let anchor): return .fractions(x: anchor.fractions.x, y: anchor.fractions.y)
        case .smart: return .attention
        case .entropy: return .entropy
        case .focalPoint(let x, let y): return .focalPoint(x: x, y: y)
        }
    }
}

/// A fixed crop anchor: where the window sits along each axis.
public enum CropAnchor: String, Sendable, Hashable, CaseIterable {
    /// Centred on both axes (the default).
    case center
    /// Top edge, centred horizontally.
    case north
    /// Bottom edge, centred horizontally.
    case south
    /// Right edge, centred vertically.
    case east
    /// Left edge, centred vertically.
    case west
    /// Top right corner.
    case northEast = "north-east"
    /// Top left corner.
    case northWest = "north-west"
    /// Bottom right corner.
    case southEast = "south-east"
    /// Bottom left corner.
    case southWest = "south-west"

    /// Where the window's origin sits along x and y, as a fraction of the slack (0 = left/top, 0.5 = centre,
    /// 1 = right/bottom).
    public var fractions: (x: Double, y: Double) {
        switch self {
        case .center: return (0.5, 0.5)
        case .north: return (0.5, 0)
        case .south: return (0.5, 1)
        case .east: return (1, 0.5)
        case .west: return (0, 0.5)
        case .northEast: return (1, 0)
        case .northWest: return (0, 0)
        case .southEast: return (1, 1)
        case .southWest: return (0, 1)
        }
    }
}
