/// How close to the resized source an automatically chosen quality must stay: a minimum SSIMULACRA2 score of the
/// decoded output against the pixels that were encoded.
///
/// The named levels (the server's `q=auto:low`, `q=auto`, `q=auto:high`) and what their scores mean on
/// SSIMULACRA2's published scale:
/// - `low`: 60 — between medium (50) and high (70) quality; artefacts visible side by side, fine for previews.
/// - `medium` (the default, `q=auto`): 70 — high quality: artefacts hard to notice without the original next to it.
/// - `high`: 80 — very high quality: not told apart from the original in a flicker test at 1:1.
///
/// - Important: A value type; thread-safe.
public struct QualityTarget: Sendable, Hashable, CustomStringConvertible {
    /// The lowest SSIMULACRA2 score the output may have, 0…100 (clamped).
    public var minimumScore: Double

    /// A target of `minimumScore` (clamped to 0…100).
    public init(minimumScore: Double) {
        self.minimumScore = min(100, max(0, minimumScore.isNaN ? 0 : minimumScore))
    }

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
            guard let score = Double(name), score.isFinite, (0...100).contains(score) else { return nil }
            self.init(minimumScore: score)
        }
    }

    /// The target a quality parameter names: `auto` (`.medium`), `auto:low`, `auto:medium`, `auto:high` or
    /// `auto:SCORE`; `nil` for anything else (a number is a fixed quality, not a target). The server's `q=` and
    /// `--default-quality` and the CLI's `--quality` read it.
    public init?(parameter: String) {
        if parameter.lowercased() == "auto" {
            self = .medium
            return
        }
        guard parameter.lowercased().hasPrefix("auto:") else { return nil }
        self.init(name: String(parameter.dropFirst(5)))
    }

    /// `low`, `medium`, `high`, or the score.
    public var description: String {
        switch self {
        case .low: return "low"
        case .medium: return "medium"
        case .high: return "high"
        default: return String(minimumScore)
        }
    }
}
