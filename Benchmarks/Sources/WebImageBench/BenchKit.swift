import CBenchHarness
import Foundation

/// One measured comparison: ours against a peer (or a limit), in the same run.
struct BenchResult: Codable, Sendable {
    /// The suite (`codec`, `kvcache`, `fetcher`, `manager`, …).
    var suite: String
    /// What was measured, e.g. `JPEG 1920×1080 baseline decode`.
    var name: String
    /// The unit of `ours` and `peer`, e.g. `ms`, `Mpx/s`, `req/s`.
    var unit: String
    /// Our figure.
    var ours: Double
    /// The peer's or limit's figure, measured in the same run.
    var peer: Double?
    /// Who the peer is, e.g. `C harness (libjpeg-turbo direct)`, `NSCache`, `curl --parallel`.
    var peerName: String?
    /// Whether a bigger figure is better (throughput) or a smaller one (time).
    var higherIsBetter: Bool
    /// The goal, in words, e.g. `≤ 1.05× C`.
    var goal: String?
    /// Whether the goal was met (nil when no goal).
    var goalMet: Bool?

    /// ours ÷ peer for times, peer ÷ ours for throughputs: < 1 means we are faster, > 1 slower.
    var costRatio: Double? {
        guard let peer, peer > 0, ours > 0 else { return nil }
        return higherIsBetter ? peer / ours : ours / peer
    }
}

/// Collects results and writes `bench-results.json` and `bench-results.md`.
final class BenchReport: @unchecked Sendable { // only touched from the main thread of the bench run
    static let shared = BenchReport()
    private(set) var results: [BenchResult] = []

    func add(_ r: BenchResult) {
        results.append(r)
        let ratio = r.costRatio.map { String(format: "%.2f×", $0) } ?? "–"
        let peer = r.peer.map { String(format: "%.3f", $0) } ?? "–"
        print(String(format: "  %-52@ ours %10.3f %@  peer %@ (%@)  cost ratio %@ %@", r.name as NSString, r.ours,
                     r.unit as NSString, peer as NSString, (r.peerName ?? "") as NSString, ratio as NSString,
                     (r.goalMet.map { $0 ? "goal met" : "GOAL MISSED" } ?? "") as NSString))
    }

    func write(to directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: directory.appendingPathComponent("bench-results.json"))
        var md = "| suite | benchmark | ours | peer / limit | cost ratio (ours ÷ peer) | goal |\n|---|---|---|---|---|---|\n"
        for r in results {
            let peer = r.peer.map { String(format: "%.3f %@ (%@)", $0, r.unit, r.peerName ?? "") } ?? "–"
            let ratio = r.costRatio.map { String(format: "%.2f×", $0) } ?? "–"
            let goal = r.goal.map { "\($0) \(r.goalMet == true ? "✅" : r.goalMet == false ? "❌" : "")" } ?? ""
            md += "| \(r.suite) | \(r.name) | \(String(format: "%.3f", r.ours)) \(r.unit) | \(peer) | \(ratio) | \(goal) |\n"
        }
        try md.write(to: directory.appendingPathComponent("bench-results.md"), atomically: true, encoding: .utf8)
    }
}

/// Timing helpers.
enum Clock {
    /// Now, in seconds, from a monotonic clock.
    static func now() -> Double { Double(bench_now_ns()) / 1e9 }

    /// Runs `body` `iterations` times after `warmup` runs and returns the median seconds per run.
    static func median(iterations: Int, warmup: Int = 1, _ body: () throws -> Void) rethrows -> Double {
        try median(iterations: iterations, warmup: warmup, clock: now, body)
    }

    /// The median of `iterations` runs of `body` (after `warmup` runs), in seconds of `clock`.
    private static func median(iterations: Int, warmup: Int, clock: () -> Double, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<warmup { try body() }
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let t0 = clock()
            try body()
            samples.append(clock() - t0)
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    /// The calling thread's CPU time so far, in seconds (`CLOCK_THREAD_CPUTIME_ID`: nanoseconds, and what another
    /// process on the machine takes does not count).
    static func threadCPUTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// As `median`, in the calling thread's CPU seconds: for single-threaded work on a shared machine.
    static func medianThreadCPU(iterations: Int, warmup: Int = 1, _ body: () throws -> Void) rethrows -> Double {
        try median(iterations: iterations, warmup: warmup, clock: threadCPUTime, body)
    }

    /// CPU time (user + system) of this process so far, in seconds.
    static func processCPUTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// Peak resident set size of this process so far, in bytes (Linux `ru_maxrss` is in KiB).
    static func peakRSS() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss) * 1024
    }
}

/// Settings of one bench run.
struct BenchSettings: Sendable {
    /// `--quick`: fewer iterations and smaller workloads (whole run under 3 minutes).
    var quick: Bool
    /// `--only SUITE[,SUITE]`: run only these suites.
    var only: Set<String>?
    /// A scratch folder for generated inputs and caches.
    var workDirectory: URL
}

/// A benchmark suite: one per layer.
protocol BenchSuite {
    /// Short name used by `--only`.
    static var name: String { get }
    /// Runs the suite and adds results to `BenchReport.shared`.
    static func run(_ settings: BenchSettings) throws
}

/// A benchmark that could not run (a peer or harness call failed); the message says which.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
