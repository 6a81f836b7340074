import Foundation

/// What automatic quality scores a candidate against: the metric's prepared reference of the image and, for an
/// image with pixels that are not opaque, two more: the image composited on black and on white. A candidate scores
/// the lowest of its scores.
///
/// Why not only the metric's own mid grey (`SSIMULACRA2` composites on it): an alpha error shows at the contrast
/// of the colour against what lies behind, and grey halves the largest contrast a colour can have. A soft shadow
/// whose WebP alpha plane was quantised to 16 levels scored 70.1 on grey, 84.4 on black and 60.3 on white; scored
/// on black and white alone, another one scored 71.2 and 74.3 there and 65.6 on grey (`ScoredWebPSettingsTests`).
/// A page is usually white or black; grey stays because it is what the metric and the benchmarks measure.
///
/// - Important: Immutable after `init`; `score(_:)` may be called from several threads at once (as
///   `SSIMULACRA2.Reference`). A transparent image costs three references and three comparisons per candidate.
struct ScoringReference: Sendable {
    /// The backgrounds a transparent image is also scored on.
    static let backgrounds = [RGBA(r: 0, g: 0, b: 0), RGBA(r: 255, g: 255, b: 255)]

    /// The prepared references, with the background each was composited on (`nil`: the image as given, which the
    /// metric composites on mid grey).
    private let references: [(reference: SSIMULACRA2.Reference, background: RGBA?)]

    /// Prepares `buffer`'s reference (and two more when it has a pixel that is not opaque).
    ///
    /// - Throws: `ImageCodecError.allocationFailed` when a composite cannot be allocated.
    init(_ buffer: PixelBuffer) throws {
        var references: [(reference: SSIMULACRA2.Reference, background: RGBA?)] = [(SSIMULACRA2.Reference(buffer), nil)]
        if !buffer.isOpaque {
            for background in Self.backgrounds {
                references.append((SSIMULACRA2.Reference(try buffer.composited(over: background)), background))
            }
        }
        self.references = references
    }

    /// The lowest score of `candidate` (the reference's size; decoded output) over the backgrounds.
    ///
    /// - Throws: `ImageProcessingError.invalidSize` when the sizes differ; `ImageCodecError.allocationFailed`.
    func score(_ candidate: PixelBuffer) throws -> Double {
        var lowest = Double.infinity
        for (reference, background) in references {
            let flattened = try background.map { try candidate.composited(over: $0) } ?? candidate
            lowest = min(lowest, try reference.score(flattened))
        }
        return lowest
    }
}
