import Foundation
import Synchronization
import WebImage

/// Suite "fetcher": our `FetchQueue` against `curl --parallel`, URLSession (FoundationNetworking) and
/// async-http-client, all fetching the same files from nginx on loopback, in the same run.
///
/// Workloads: 1,000 × 50 KB and 100 × 1 MB (quick: 200 × 50 KB and 30 × 1 MB), at concurrency 6 and 16.
/// Reported: requests/s, MB/s and client CPU time (user + system of the client process; for curl, of the child).
/// Goal: ≥ 0.9× curl CLI throughput, ≥ 2× URLSession.
enum FetcherBench: BenchSuite {
    static let name = "fetcher"

    /// One client's measurement of one workload.
    struct Measurement {
        var seconds: Double
        var cpuSeconds: Double
        var bytes: Int
        var requests: Int
        var requestsPerSecond: Double { Double(requests) / seconds }
        var megabytesPerSecond: Double { Double(bytes) / seconds / 1e6 }
    }

    /// A client under test: fetches every URL with at most `concurrency` in flight.
    typealias Client = (_ urls: [URL], _ concurrency: Int) throws -> Measurement

    static func run(_ settings: BenchSettings) throws {
        let root = settings.workDirectory.appendingPathComponent("fetcher")
        let small = settings.quick ? 200 : 1_000
        let large = settings.quick ? 30 : 100
        let www = root.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try writeFiles(in: www, prefix: "s", count: small, size: 50 * 1_024)
        try writeFiles(in: www, prefix: "l", count: large, size: 1_024 * 1_024)

        let nginx = try NginxServer.start(root: root, www: www)
        defer { nginx.stop() }
        let workloads: [(label: String, urls: [URL])] = [
            ("\(small) × 50 KB", (0..<small).map { nginx.url("/s\($0).bin") }),
            ("\(large) × 1 MB", (0..<large).map { nginx.url("/l\($0).bin") }),
        ]
        // FETCHER_BENCH_CLIENTS="FetchQueue,URLSession" limits the clients (for profiling one of them).
        let wanted = ProcessInfo.processInfo.environment["FETCHER_BENCH_CLIENTS"].map { Set($0.split(separator: ",").map(String.init)) }
        let clients: [(name: String, client: Client)] = [
            ("FetchQueue", fetchQueue), ("curl --parallel", curlCLI), ("URLSession", urlSession),
            ("async-http-client", asyncHTTPClient),
        ].filter { wanted?.contains($0.0) ?? true }
        let repetitions = settings.quick ? 1 : 5
        for (label, urls) in workloads {
            for concurrency in [6, 16] {
                var best: [String: Measurement] = [:]
                for (_, client) in clients { _ = try client(Array(urls.prefix(12)), concurrency) } // warm-up
                // Clients take turns in each repetition, so load from other processes hits them alike; the best
                // repetition of each counts.
                for _ in 0..<repetitions {
                    for (name, client) in clients {
                        let m = try client(urls, concurrency)
                        guard m.bytes == expectedBytes(label: label, count: urls.count) else {
                            throw BenchFailure("\(name) fetched \(m.bytes) bytes for \(label)")
                        }
                        if best[name].map({ m.seconds < $0.seconds }) ?? true { best[name] = m }
                    }
                }
                for (name, _) in clients {
                    if let m = best[name] {
                        print(String(format: "    %-20@ %@ c=%2d: %8.1f req/s %8.1f MB/s  CPU %.3f s", name as NSString,
                                     label as NSString, concurrency, m.requestsPerSecond, m.megabytesPerSecond,
                                     m.cpuSeconds))
                    }
                }
                report(label: label, concurrency: concurrency, best)
            }
        }
    }

    private static func expectedBytes(label: String, count: Int) -> Int {
        label.hasSuffix("50 KB") ? count * 50 * 1_024 : count * 1_024 * 1_024
    }

    private static func report(label: String, concurrency: Int, _ best: [String: Measurement]) {
        guard let ours = best["FetchQueue"] else { return }
        let prefix = "\(label), concurrency \(concurrency)"
        if let curl = best["curl --parallel"] {
            let met = ours.requestsPerSecond >= 0.9 * curl.requestsPerSecond
            BenchReport.shared.add(BenchResult(suite: name, name: "\(prefix): req/s", unit: "req/s",
                                               ours: ours.requestsPerSecond, peer: curl.requestsPerSecond,
                                               peerName: "curl --parallel", higherIsBetter: true,
                                               goal: "≥ 0.9× curl", goalMet: met))
            BenchReport.shared.add(BenchResult(suite: name, name: "\(prefix): MB/s", unit: "MB/s",
                                               ours: ours.megabytesPerSecond, peer: curl.megabytesPerSecond,
                                               peerName: "curl --parallel", higherIsBetter: true,
                                               goal: "≥ 0.9× curl", goalMet: met))
            BenchReport.shared.add(BenchResult(suite: name, name: "\(prefix): client CPU", unit: "s",
                                               ours: ours.cpuSeconds, peer: curl.cpuSeconds,
                                               peerName: "curl --parallel", higherIsBetter: false,
                                               goal: nil, goalMet: nil))
        }
        if let session = best["URLSession"] {
            BenchResult(suite: name, name: "\(prefix): req/s vs URLSession", unit: "req/s",
                        ours: ours.requestsPerSecond, peer: session.requestsPerSecond, peerName: "URLSession",
                        higherIsBetter: true, goal: "≥ 2× URLSession",
                        goalMet: ours.requestsPerSecond >= 2 * session.requestsPerSecond).add()
            BenchResult(suite: name, name: "\(prefix): client CPU vs URLSession", unit: "s",
                        ours: ours.cpuSeconds, peer: session.cpuSeconds, peerName: "URLSession",
                        higherIsBetter: false, goal: nil, goalMet: nil).add()
        }
        if let ahc = best["async-http-client"] {
            BenchResult(suite: name, name: "\(prefix): req/s vs async-http-client", unit: "req/s",
                        ours: ours.requestsPerSecond, peer: ahc.requestsPerSecond, peerName: "async-http-client",
                        higherIsBetter: true, goal: nil, goalMet: nil).add()
            BenchResult(suite: name, name: "\(prefix): client CPU vs async-http-client", unit: "s",
                        ours: ours.cpuSeconds, peer: ahc.cpuSeconds, peerName: "async-http-client",
                        higherIsBetter: false, goal: nil, goalMet: nil).add()
        }
    }

    private static func writeFiles(in directory: URL, prefix: String, count: Int, size: Int) throws {
        var bytes = [UInt8](repeating: 0, count: size)
        for index in 0..<count {
            for offset in stride(from: 0, to: size, by: 97) { bytes[offset] = UInt8(truncatingIfNeeded: index &+ offset) }
            try Data(bytes).write(to: directory.appendingPathComponent("\(prefix)\(index).bin"))
        }
    }

    /// Our client: one private network thread and a `FetchQueue` of `concurrency` transfers.
    static func fetchQueue(_ urls: [URL], _ concurrency: Int) throws -> Measurement {
        let thread = NetworkThread()
        defer { thread.stop(); thread.join() }
        let queue = FetchQueue(thread: thread, maxConcurrentTransfers: concurrency)
        let group = DispatchGroup()
        let totals = Mutex((bytes: 0, errors: 0))
        let cpu0 = Clock.processCPUTime()
        let t0 = Clock.now()
        for url in urls {
            group.enter()
            queue.fetch(FetchRequest(url: url)) { result in
                totals.withLock {
                    switch result {
                    case .success(let fetched): $0.bytes += fetched.body.count
                    case .failure: $0.errors += 1
                    }
                }
                group.leave()
            }
        }
        group.wait()
        let seconds = Clock.now() - t0
        let (bytes, errors) = totals.withLock { ($0.bytes, $0.errors) }
        guard errors == 0 else { throw BenchFailure("FetchQueue: \(errors) errors") }
        return Measurement(seconds: seconds, cpuSeconds: Clock.processCPUTime() - cpu0, bytes: bytes,
                           requests: urls.count)
    }
}

extension BenchResult {
    /// Adds this result to the shared report.
    func add() { BenchReport.shared.add(self) }
}
