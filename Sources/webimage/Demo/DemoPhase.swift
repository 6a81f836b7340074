import Foundation
import WebImage

/// One pass of the demo over the gallery (cold, warm disk, warm memory) and its outcomes.
struct DemoPhase {
    var name: String
    var outcomes: [LoadOutcome]
    /// Wall time of the whole pass, in seconds.
    var seconds: Double
    /// Encoded bytes of the images delivered.
    var bytes: Int64

    var failures: [LoadOutcome] { outcomes.filter { !$0.isSuccess } }

    /// `remote 50`, or `disk 48, remote 2`: how many images came from each source.
    var sourceSummary: String {
        var counts: [String: Int] = [:]
        for outcome in outcomes where outcome.isSuccess { counts[Self.name(of: outcome.source), default: 0] += 1 }
        let failed = outcomes.count - outcomes.filter(\.isSuccess).count
        if failed > 0 { counts["failed"] = failed }
        return counts.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// The table row: phase, images, sources, bytes, time, images/s, p50, p99.
    var tableRow: [String] {
        let latencies = outcomes.map(\.seconds)
        let rate = seconds > 0 ? Double(outcomes.count) / seconds : 0
        return [name, "\(outcomes.count)", sourceSummary, Terminal.bytes(bytes), Terminal.duration(seconds),
                String(format: "%.0f", rate), Terminal.duration(Terminal.percentile(50, of: latencies)),
                Terminal.duration(Terminal.percentile(99, of: latencies))]
    }

    static let tableHeader = ["phase", "images", "source", "bytes", "time", "img/s", "p50", "p99"]
    static let numericColumns: Set<Int> = [1, 3, 4, 5, 6, 7]

    /// The word the table uses for a source.
    static func name(of source: ImageSource) -> String {
        switch source {
        case .none: return "none"
        case .memoryCacheFast, .memoryCache: return "memory"
        case .diskCache: return "disk"
        case .sharedCache: return "shared"
        case .remote: return "remote"
        }
    }
}
