import ArgumentParser
import Foundation
import WebImage

/// `webimage bench-chart`: draws bench-results.json as a PNG bar chart of cost ratios (used by `make bench`).
struct BenchChartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-chart",
        abstract: "Draw bench-results.json as a PNG chart of cost ratios (ours ÷ peer).",
        discussion: """
        One bar per comparison: the time we take for each unit of the peer's time (for throughputs, the
        inverse), on a log scale with 1× marked. Green bars met their goal, red ones missed it, grey ones have
        none. `make bench` runs this after the benchmarks.

        Example:
          webimage bench-chart bench-results.json --output bench-results.png
        """,
        shouldDisplay: false
    )

    @Argument(help: "bench-results.json written by the Benchmarks package.")
    var results: String = "bench-results.json"

    @Option(help: "Where to write the PNG.")
    var output: String = "bench-results.png"

    func run() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: results))
        let rows = try JSONDecoder().decode([BenchChart.Row].self, from: data).filter { $0.costRatio != nil }
        guard !rows.isEmpty else { throw ValidationError("no comparisons with a peer in \(results)") }
        let png = try BenchChart.render(rows)
        try png.write(to: URL(fileURLWithPath: output))
        print("webimage bench-chart: \(rows.count) comparisons → \(output)")
    }
}
