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

        With --suite, draws that suite's rows only, as pairs of bars (ours above the peer, each pair scaled to
        its larger figure, the figures written beside): the service benchmark's req/s and p99 per run.

        Examples:
          webimage bench-chart bench-results.json --output bench-results.png
          webimage bench-chart bench-results.json --suite service --output docs/service-bench.png
        """,
        shouldDisplay: false
    )

    @Argument(help: "bench-results.json written by the Benchmarks package.")
    var results: String = "bench-results.json"

    @Option(help: "Where to write the PNG.")
    var output: String = "bench-results.png"

    @Option(help: "Draw only this suite's rows, as pairs of bars (ours and the peer's figure).")
    var suite: String?

    @Option(help: "The title of a --suite chart.")
    var title: String?

    func run() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: results))
        let rows = try JSONDecoder().decode([BenchChart.Row].self, from: data)
            .filter { $0.costRatio != nil && (suite == nil || $0.suite == suite) }
        guard !rows.isEmpty else { throw ValidationError("no comparisons with a peer in \(results)") }
        let png = try suite.map { try BenchChart.renderPairs(rows, title: title ?? "\($0): ours and the peer's figures") }
            ?? BenchChart.render(rows)
        try png.write(to: URL(fileURLWithPath: output))
        print("webimage bench-chart: \(rows.count) comparisons → \(output)")
    }
}
