import CBenchHarness
import Foundation
import Synchronization
import WebImage
import WebImageMemcached

/// Suite "memcached": the shared cache tier (`WebImageMemcached`) on memcached servers started on loopback.
///
/// - Hit latency of each level for 1 KB, 50 KB and 500 KB values: memory (`MemoryCache`), local disk
///   (`DiskCache`), the shared tier (`MemcachedTier.value(forKey:)` waited for, key mapping and completion
///   included) and an origin fetch (`FetchQueue` from nginx on loopback); the shared tier against a bare
///   libmemcached `memcached_get` of the same value from C, in the same run. Medians. Then the parts: key
///   mapping, and the queue round trip an operation pays only when every connection is busy.
/// - The pipeline's path: a request for an image not in memory, from the local disk vs from the shared tier.
/// - A fleet: worker 1 loads N distinct images (cold), then worker 2 (own memory and disk, like a restarted or
///   added worker) loads the same N, with a pool of three memcached vs without — origin requests (nginx's
///   access log) and total time.
///
/// Goals: a 50 KB shared-tier hit ≤ 1.3× the C `memcached_get`; with the tier, origin requests = distinct images.
enum MemcachedBench: BenchSuite {
    static let name = "memcached"

    static func run(_ settings: BenchSettings) throws {
        let root = settings.workDirectory.appendingPathComponent("memcached")
        let www = root.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        let pool = try (0..<3).map { _ in try BenchMemcached.start() }
        defer { for server in pool { server.stop() } }
        let accessLog = root.appendingPathComponent("access.log")

        // Values of each size, written as files for nginx too.
        let sizes = [("1 KB", 1_024), ("50 KB", 50 * 1_024), ("500 KB", 500 * 1_024)]
        var generator = SystemRandomNumberGenerator()
        var values: [String: Data] = [:]
        for (label, size) in sizes {
            let data = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            values[label] = data
            try data.write(to: www.appendingPathComponent("value-\(size).bin"))
        }
        let count = settings.quick ? 120 : 500
        let files = try ManagerBenchImages.write(count: count, into: www)
        let nginx = try NginxServer.start(root: root, www: www, accessLog: accessLog)
        defer { nginx.stop() }

        let iterations = settings.quick ? 200 : 2_000
        let report = BenchReport.shared
        let memory = MemoryCache<String, Data>(name: "bench.memory")
        let disk = try DiskCache(path: root.appendingPathComponent("disk").path)
        let single = try MemcachedTier(servers: [pool[0].address])
        let queue = FetchQueue(maxConcurrentTransfers: 1)
        for (label, size) in sizes {
            guard let value = values[label] else { continue }
            let key = "https://origin.example/value-\(size).bin"
            memory.setObject(value, forKey: key, cost: value.count)
            try disk.setObject(value, forKey: key)
            guard setAndWait(single, value, forKey: key) else { throw BenchFailure("memcached set of \(label) failed") }

            let memoryHit = Clock.median(iterations: iterations) { _ = memory.object(forKey: key) }
            let diskHit = try Clock.median(iterations: iterations) { _ = try disk.object(forKey: key) }
            let sharedHit = try Clock.median(iterations: iterations) {
                guard getAndWait(single, forKey: key)?.count == size else { throw BenchFailure("shared-tier miss of \(label)") }
            }
            var cNanoseconds: UInt64 = 0
            let remote = RemoteCacheKey.standard.remoteKey(for: key)
            guard bench_memcached_get("127.0.0.1", UInt32(pool[0].port), remote, size, Int32(iterations), &cNanoseconds) == 0 else {
                throw BenchFailure("C memcached_get of \(label) failed")
            }
            let originURL = nginx.url("/value-\(size).bin")
            let origin = try Clock.median(iterations: max(50, iterations / 10)) {
                guard fetchAndWait(queue, originURL)?.count == size else { throw BenchFailure("origin fetch of \(label) failed") }
            }
            let c = Double(cNanoseconds) / 1e3
            let isGoal = size == 50 * 1_024
            report.add(BenchResult(suite: name, name: "\(label) hit: shared tier (memcached, 1 server)", unit: "µs",
                                   ours: sharedHit * 1e6, peer: c, peerName: "C memcached_get", higherIsBetter: false,
                                   goal: isGoal ? "≤ 1.3× C" : nil, goalMet: isGoal ? sharedHit * 1e6 <= 1.3 * c : nil))
            report.add(BenchResult(suite: name, name: "\(label) hit: memory", unit: "µs", ours: memoryHit * 1e6, peer: nil,
                                   peerName: nil, higherIsBetter: false, goal: nil, goalMet: nil))
            report.add(BenchResult(suite: name, name: "\(label) hit: local disk", unit: "µs", ours: diskHit * 1e6, peer: nil,
                                   peerName: nil, higherIsBetter: false, goal: nil, goalMet: nil))
            report.add(BenchResult(suite: name, name: "\(label) fetch: loopback origin (nginx)", unit: "µs", ours: origin * 1e6,
                                   peer: nil, peerName: nil, higherIsBetter: false, goal: nil, goalMet: nil))
        }

        // Where the shared tier's time over C goes: the key mapping (MD5 of the cache key), and — only when every
        // connection is busy, as the tier then queues the operation — the round trip to one of the tier's serial
        // queues and back to a waiting thread (two thread wake-ups), without any I/O.
        let keyMapping = Clock.median(iterations: iterations) {
            _ = RemoteCacheKey.standard.remoteKey(for: "https://origin.example/value-51200.bin")
        }
        let hopQueue = DispatchQueue(label: "bench.hop", qos: .userInitiated)
        let hop = Clock.median(iterations: iterations) {
            let done = DispatchSemaphore(value: 0)
            hopQueue.async { done.signal() }
            done.wait()
        }
        report.add(BenchResult(suite: name, name: "shared-tier overhead: key mapping (MD5)", unit: "µs", ours: keyMapping * 1e6,
                               peer: nil, peerName: nil, higherIsBetter: false, goal: nil, goalMet: nil))
        report.add(BenchResult(suite: name, name: "shared-tier overhead: queue round trip, no I/O (all connections busy)",
                               unit: "µs", ours: hop * 1e6, peer: nil, peerName: nil, higherIsBetter: false, goal: nil,
                               goalMet: nil))

        // The pipeline's own path: a request whose image is not in memory, served by the local disk vs by the shared
        // tier (disk miss, then the tier asked from the task's image queue), the same small images decoded by both.
        let pipeline = try pipelineHits(files.filter { $0.name.hasSuffix(".png") || $0.name.hasSuffix(".gif") }
                                            .map { nginx.url("/" + $0.name + "?pipeline") }, // not the fleet's keys
                                        tier: single, root: root.appendingPathComponent("pipeline"))
        report.add(BenchResult(suite: name, name: "request, not in memory: shared-tier hit vs local disk hit (small PNG/GIF, decoded)",
                               unit: "µs", ours: pipeline.shared * 1e6, peer: pipeline.disk * 1e6, peerName: "local disk hit",
                               higherIsBetter: false, goal: nil, goalMet: nil))

        // The fleet: two workers, one after the other, each with its own memory and disk.
        let urls = files.map { nginx.url("/" + $0.name) }
        let tier = try MemcachedTier(servers: pool.map(\.address))
        let withTier = try fleet(urls, tier: tier, root: root.appendingPathComponent("fleet-tier"), accessLog: accessLog)
        let without = try fleet(urls, tier: nil, root: root.appendingPathComponent("fleet-plain"), accessLog: accessLog)
        report.add(BenchResult(suite: name, name: "fleet: 2 workers × \(count) images, origin requests", unit: "GETs",
                               ours: Double(withTier.originRequests), peer: Double(without.originRequests),
                               peerName: "without the tier", higherIsBetter: false, goal: "= distinct images (\(count))",
                               goalMet: withTier.originRequests == count))
        report.add(BenchResult(suite: name, name: "fleet: 2 workers × \(count) images, total time", unit: "s",
                               ours: withTier.seconds, peer: without.seconds, peerName: "without the tier",
                               higherIsBetter: false, goal: nil, goalMet: nil))
        report.add(BenchResult(suite: name, name: "fleet: worker 2 alone (warm tier vs cold)", unit: "s",
                               ours: withTier.secondWorker, peer: without.secondWorker, peerName: "without the tier",
                               higherIsBetter: false, goal: nil, goalMet: nil))
        print(String(format: "  tier statistics: %d lookups, %d hits, %d stores, %d errors, %d skipped (too large)",
                     tier.statistics.lookups, tier.statistics.hits, tier.statistics.stores, tier.statistics.errors,
                     tier.statistics.skippedTooLarge))
    }

    /// Median request latency (one request at a time) for images not in memory: from a local disk that has them,
    /// and from the shared tier only (an empty disk; `.cacheMemoryOnly`, so a hit is not written to the disk).
    static func pipelineHits(_ urls: [URL], tier: MemcachedTier, root: URL) throws -> (disk: Double, shared: Double) {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // A worker loads them once from the origin: on its disk and in the tier.
        let first = try ImageCache(path: root.appendingPathComponent("first").path, sharedTier: tier)
        _ = try ManagerBench.timeManager(ImageManager(cache: first, queue: FetchQueue(maxConcurrentTransfers: 16)), urls)
        first.waitForPendingWrites()
        first.waitForPendingSharedWrites()
        let fromDisk = ImageManager(cache: try ImageCache(path: root.appendingPathComponent("first").path, sharedTier: nil))
        let fromTier = ImageManager(cache: try ImageCache(path: root.appendingPathComponent("second").path, sharedTier: tier))
        var disk: [Double] = []
        var shared: [Double] = []
        for url in urls { // each URL once per manager: always a memory miss
            disk.append(try time { try request(fromDisk, url, options: [], expecting: .diskCache) })
            shared.append(try time { try request(fromTier, url, options: [.cacheMemoryOnly], expecting: .sharedCache) })
        }
        return (disk.sorted()[disk.count / 2], shared.sorted()[shared.count / 2])
    }

    private static func time(_ body: () throws -> Void) rethrows -> Double {
        let t0 = Clock.now()
        try body()
        return Clock.now() - t0
    }

    /// One request, waited for; fails unless it was served from `expected`.
    private static func request(_ manager: ImageManager, _ url: URL, options: ImageOptions, expecting expected: ImageSource) throws {
        let done = DispatchSemaphore(value: 0)
        let source = Mutex<ImageSource?>(nil)
        manager.requestImage(url: url, options: options) { image, _, from, stage, _ in
            guard stage != .progress else { return }
            source.withLock { $0 = image == nil ? nil : from }
            done.signal()
        }
        done.wait()
        let from = source.withLock { $0 }
        guard from == expected else { throw BenchFailure("\(url) served from \(String(describing: from)), not \(expected)") }
    }

    struct Fleet {
        var originRequests: Int
        var seconds: Double
        var secondWorker: Double
    }

    /// Worker 1 then worker 2 over `urls`; origin requests counted in nginx's access log.
    static func fleet(_ urls: [URL], tier: MemcachedTier?, root: URL, accessLog: URL) throws -> Fleet {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let before = try lines(in: accessLog)
        var times: [Double] = []
        for worker in 1...2 {
            let cache = try ImageCache(path: root.appendingPathComponent("worker-\(worker)").path, sharedTier: tier)
            let manager = ImageManager(cache: cache, queue: FetchQueue(maxConcurrentTransfers: 16))
            let t0 = Clock.now()
            let phase = try ManagerBench.timeManager(manager, urls)
            _ = phase
            cache.waitForPendingWrites()
            cache.waitForPendingSharedWrites()
            times.append(Clock.now() - t0)
        }
        // nginx writes its access log line after the response: let it flush.
        usleep(200_000)
        return Fleet(originRequests: try lines(in: accessLog) - before, seconds: times.reduce(0, +), secondWorker: times[1])
    }

    static func lines(in file: URL) throws -> Int {
        guard FileManager.default.fileExists(atPath: file.path) else { return 0 }
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").count
    }

    static func setAndWait(_ tier: MemcachedTier, _ value: Data, forKey key: String) -> Bool {
        let stored = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        tier.setValue(value, forKey: key, timeToLive: nil) { ok in
            stored.withLock { $0 = ok }
            done.signal()
        }
        done.wait()
        return stored.withLock { $0 }
    }

    static func getAndWait(_ tier: MemcachedTier, forKey key: String) -> Data? {
        let box = Mutex<Data?>(nil)
        let done = DispatchSemaphore(value: 0)
        tier.value(forKey: key) { data in
            box.withLock { $0 = data }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }
    }

    static func fetchAndWait(_ queue: FetchQueue, _ url: URL) -> Data? {
        let box = Mutex<Data?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.fetch(FetchRequest(url: url)) { result in
            if case .success(let fetched) = result { box.withLock { $0 = fetched.body } }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }
    }
}

/// `memcached` on a free loopback port for the suite (`-m 256 -I 1m`), stopped with SIGKILL.
struct BenchMemcached {
    let port: Int
    private let process: Process
    var address: String { "127.0.0.1:\(port)" }

    static func start() throws -> BenchMemcached {
        guard let binary = ["/usr/bin/memcached", "/usr/local/bin/memcached"].first(where: FileManager.default.isExecutableFile) else {
            throw BenchFailure("memcached not found (make bench installs it)")
        }
        let port = try NginxServer.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var arguments = ["-l", "127.0.0.1", "-p", "\(port)", "-U", "0", "-m", "256", "-I", "1m", "-t", "2"]
        if getuid() == 0 { arguments += ["-u", "root"] }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Clock.now() + 10
        while !NginxServer.canConnect(port: port) {
            guard process.isRunning, Clock.now() < deadline else {
                process.terminate()
                throw BenchFailure("memcached did not start on port \(port)")
            }
            usleep(20_000)
        }
        return BenchMemcached(port: port, process: process)
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
