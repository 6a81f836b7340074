import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// The peers of suite "fetcher": each fetches every URL with at most `concurrency` requests in flight.
extension FetcherBench {
    /// `curl --parallel --parallel-max N` (the CLI, HTTP/1.1 keep-alive, bodies to /dev/null); CPU time is the
    /// child's.
    static func curlCLI(_ urls: [URL], _ concurrency: Int) throws -> Measurement {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString).cfg")
        defer { try? FileManager.default.removeItem(at: config) }
        try urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined()
            .write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--silent", "--show-error", "--fail", "--parallel", "--parallel-immediate",
                             "--parallel-max", String(concurrency), "--write-out", "%{size_download}\n",
                             "--config", config.path]
        let output = Pipe()
        process.standardOutput = output
        let cpu0 = childCPUTime()
        let t0 = Clock.now()
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = Clock.now() - t0
        guard process.terminationStatus == 0 else { throw BenchFailure("curl exited \(process.terminationStatus)") }
        let bytes = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }.reduce(0, +)
        return Measurement(seconds: seconds, cpuSeconds: childCPUTime() - cpu0, bytes: bytes, requests: urls.count)
    }

    /// URLSession from FoundationNetworking, an ephemeral session with `concurrency` connections per host and a
    /// window of `concurrency` tasks.
    static func urlSession(_ urls: [URL], _ concurrency: Int) throws -> Measurement {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let window = Window(urls: urls)
        let cpu0 = Clock.processCPUTime()
        let t0 = Clock.now()
        @Sendable func next() {
            guard let url = window.take() else { return }
            session.dataTask(with: url) { data, response, error in
                let ok = error == nil && (response as? HTTPURLResponse)?.statusCode == 200
                window.finish(bytes: ok ? data?.count ?? 0 : -1)
                next()
            }.resume()
        }
        for _ in 0..<concurrency { next() }
        window.wait()
        return try window.measurement(seconds: Clock.now() - t0, cpuSeconds: Clock.processCPUTime() - cpu0)
    }

    /// async-http-client on its singleton event-loop group, `concurrency` HTTP/1 connections and tasks.
    static func asyncHTTPClient(_ urls: [URL], _ concurrency: Int) throws -> Measurement {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                             concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { try? client.syncShutdown() }
        let window = Window(urls: urls)
        let cpu0 = Clock.processCPUTime()
        let t0 = Clock.now()
        for _ in 0..<concurrency {
            Task {
                while let url = window.take() {
                    do {
                        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString),
                                                                timeout: .seconds(60))
                        let body = try await response.body.collect(upTo: 16 << 20)
                        window.finish(bytes: response.status.code == 200 ? body.readableBytes : -1)
                    } catch {
                        window.finish(bytes: -1)
                    }
                }
            }
        }
        window.wait()
        return try window.measurement(seconds: Clock.now() - t0, cpuSeconds: Clock.processCPUTime() - cpu0)
    }

    /// CPU time (user + system) of waited-for children so far, in seconds.
    private static func childCPUTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}

/// Hands out URLs to a fixed number of workers and counts finished requests and bytes.
private final class Window: Sendable {
    private struct State { var next = 0; var done = 0; var bytes = 0; var errors = 0 }
    private let urls: [URL]
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    init(urls: [URL]) { self.urls = urls }

    func take() -> URL? {
        state.withLock { state in
            guard state.next < urls.count else { return nil }
            defer { state.next += 1 }
            return urls[state.next]
        }
    }

    /// Records one finished request (`bytes` < 0: failed).
    func finish(bytes: Int) {
        let all = state.withLock { state -> Bool in
            state.done += 1
            if bytes < 0 { state.errors += 1 } else { state.bytes += bytes }
            return state.done == urls.count
        }
        if all { finished.signal() }
    }

    func wait() { finished.wait() }

    func measurement(seconds: Double, cpuSeconds: Double) throws -> FetcherBench.Measurement {
        let (bytes, errors) = state.withLock { ($0.bytes, $0.errors) }
        guard errors == 0 else { throw BenchFailure("\(errors) requests failed") }
        return FetcherBench.Measurement(seconds: seconds, cpuSeconds: cpuSeconds, bytes: bytes, requests: urls.count)
    }
}
