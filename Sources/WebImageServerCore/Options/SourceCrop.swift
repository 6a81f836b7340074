/// A box of the (oriented) source, in source pixels, from (`left`, `top`) inclusive to (`right`, `bottom`)
/// exclusive: thumbor's manual crop `AxB:CxD` and its `focal(AxB:CxD)`.
///
/// - Important: A value type; thread-safe.
public struct SourceCrop: Sendable, Hashable {
    /// The left edge, in source pixels.
    public var left: Int
    /// The top edge, in source pixels.
    public var top: Int
    /// The right edge (exclusive), in source pixels.
    public var right: Int
    /// The bottom edge (exclusive), in source pixels.
    public var bottom: Int

    /// Makes a box from its edges (nothing is checked: `clamped(width:height:)` does, against a source).
    public init(left: Int, top: Int, right: Int, bottom: Int) {
        (self.left, self.top, self.right, self.bottom) = (left, top, right, bottom)
    }

    /// The box limited to a `width` × `height` source, or `nil` when nothing of it is left (thumbor then ignores
    /// the crop).
    public func clamped(width: Int, height: Int) -> SourceCrop? {
        let box = SourceCrop(left: min(max(left, 0), width), top: min(max(top, 0), height),
                             right: min(max(right, 0), width), bottom: min(max(bottom, 0), height))
        return box.left < box.right && box.top < box.bottom ? box : nil
    }

    /// The spelling in `canonicalProcessing`.
    public var canonicalName: String { "\(left)x\(top):\(right)x\(bottom)" }
}
