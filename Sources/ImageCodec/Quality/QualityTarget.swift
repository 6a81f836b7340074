/// How close to the resized source an automatically chosen quality must stay: a minimum SSIMULACRA2 score of the
/// decoded output against the pixels that were encoded.
///
/// The named levels (the server's `q=auto:low`, `q=auto`, `q=auto:high`) and what their scores mean on
/// SSIMULACRA2's published scale:
/// - `low`: 60 — between medium (50) and high (70) quality; artefacts visible side by side, fine for previews.
/// - `medium` (the default, `q=auto`): 70 — high quality: artefacts hard to notice without the original next to it.
/// - `high`: 80 — very high quality: not told apart from the original in a flicker test at 1:1.
///
/// How the target is held (`check`): `.scored` (the default) measures the chosen quality and never serves a
/// measured miss; `.predicted` encodes once at the predictor's quality, unscored (about the cost of a
/// fixed-quality encode, with a measured miss rate: see docs/quality.md).
///
/// - Important: A value type; thread-safe.
public struct QualityTarget: Sendable, Hashable, CustomStringConvertible {
    /// The lowest SSIMULACRA2 score the output may have, 0…100: a value outside is clamped to it, NaN and −0
    /// become 0 (set through the initializer or the property alike).
    public var minimumScore: Double {
        get { clampedScore }
        set { clampedScore = min(100, max(0, newValue.isNaN ? 0 : newValue)) + 0 }
    }
    private var clampedScore = 0.0

    /// How automatic quality holds the target. Default `.scored`.
    public var check: Check

    /// How automatic quality holds a target.
    public enum Check: String, Sendable, Hashable {
        /// The predictor's quality is encoded, decoded and scored, then refined by a search (at most 4 tries;
        /// AVIF 5, WebP and JPEG XL 6) for the lowest quality that passes; when none passes, the unscored
        /// lossless-or-maximum fallback. The output never scores under the target by our metric. Costs that many
        /// encodes, decodes and metric comparisons plus the reference's half.
        case scored
        /// One encode at the predictor's quality, nothing scored: near a fixed-quality encode's cost, but a
        /// share of images lands a few points under the target (measured on the corpus: docs/quality.md).
        case predicted
    }

    /// A target of `minimumScore` (clamped to 0…100), held as `check` says (default `.scored`).
    public init(minimumScore: Double, check: Check = .scored) {
        self.check = check
        self.minimumScore = minimumScore
    }

    /// This target held by `check` instead.
    public func checked(_ check: Check) -> QualityTarget {
        QualityTarget(minimumScore: minimumScore, check: check)
    }

    /// The most memory a scored search (`Check.scored`) holds per pixel of the image it encodes, besides the
    /// encoder's own buffers: SSIMULACRA2's prepared references with their planes and scratch (three for a
    /// transparent image, scored on grey, black and white), a decoded candidate and its composites. For a memory
    /// budget (the image service reserves it for `q=auto`): measured as a whole `q=auto` WebP render of a
    /// transparent 600×600 growing by 325 bytes a pixel, 24 of them the decode and encoder
    /// (`Review20AutomaticQualityBudgetTests`). Constant; thread-safe.
    package static let scoredSearchBytesPerPixel = 300

    /// Score 60: visibly compressed side by side, fine for previews and thumbnails.
    public static let low = QualityTarget(minimumScore: 60)
    /// Score 70 (the default of `q=auto`): high quality, artefacts hard to see without the original.
    public static let medium = QualityTarget(minimumScore: 70)
    /// Score 80: very high quality, indistinguishable in a flicker test at 1:1.
    public static let high = QualityTarget(minimumScore: 80)

    /// The level named `low`, `medium` or `high`, or a score written as a number (`"74.5"`); `nil` otherwise.
    public init?(name: String) {
        switch name.lowercased() {
        case "low": self = .low
        case "medium": self = .medium
        case "high": self = .high
        default:
            // Digits, point, sign and exponent only: `Double(_:)` stops at a NUL ("70\u{0}junk" read as 70).
            guard name.utf8.allSatisfy({ (0x30...0x39).contains($0) || [0x2E, 0x2B, 0x2D, 0x65, 0x45].contains($0) }),
                  let score = Double(name), score.isFinite, (0...100).contains(score) else { return nil }
            self.init(minimumScore: score)
        }
    }

    /// The target a quality parameter names: `auto` (`.medium`), `auto:low`, `auto:medium`, `auto:high` or
    /// `auto:SCORE`, each optionally followed by `:predicted` (unscored, `Check.predicted`; `auto:predicted` is
    /// `.medium` unscored); `nil` for anything else (a number is a fixed quality, not a target). The server's `q=`
    /// and `--default-quality` and the CLI's `--quality` read it.
    public init?(parameter: String) {
        var parts = parameter.lowercased().split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "auto", parts.count <= 3 else { return nil }
        var check = Check.scored
        if parts.count >= 2, parts.last == "predicted" {
            check = .predicted
            parts.removeLast()
        }
        switch parts.count {
        case 1: self = QualityTarget.medium.checked(check)
        case 2:
            guard let named = QualityTarget(name: parts[1]) else { return nil }
            self = named.checked(check)
        default: return nil
        }
    }

    /// The parameter that names this target (`auto:70.0`, `auto:70.0:predicted`): `init(parameter:)` reads it
    /// back; the server's result keys use it.
    public var parameter: String {
        "auto:\(minimumScore)" + (check == .predicted ? ":predicted" : "")
    }

    /// `low`, `medium`, `high`, or the score; `+predicted` when unscored.
    public var description: String {
        let level: String
        switch minimumScore {
        case QualityTarget.low.minimumScore: level = "low"
        case QualityTarget.medium.minimumScore: level = "medium"
        case QualityTarget.high.minimumScore: level = "high"
        default: level = String(minimumScore)
        }
        return check == .predicted ? level + "+predicted" : level
    }
}
