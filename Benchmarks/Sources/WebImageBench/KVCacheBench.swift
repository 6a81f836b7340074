import CBenchHarness
import Foundation
import Synchronization
import WebImage

/// The KVCache suite: YYCache's memory workload and an eviction workload against NSCache and a
/// Mutex-guarded Dictionary; disk workloads and a value-size sweep against a plain file-per-key store
/// (the SDWebImage design), all in the same run.
enum KVCacheBench: BenchSuite {
    static let name = "kvcache"

    static func run(_ settings: BenchSettings) throws {
        try runMemory(settings)
        try runEviction(settings)
        try runDisk(settings)
        try runSweep(settings)
    }

    // MARK: Helpers

    static func add(_ name: String, unit: String = "µs/op", ours: Double, peer: Double, peerName: String,
                    higherIsBetter: Bool = false, goal: String?, met: Bool?) {
        BenchReport.shared.add(BenchResult(suite: Self.name, name: name, unit: unit, ours: ours, peer: peer,
                                           peerName: peerName, higherIsBetter: higherIsBetter, goal: goal, goalMet: met))
    }

    /// Seconds per operation of `body` (which does `count` operations), best of `repeats` runs.
    static func perOp(_ count: Int, repeats: Int, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<repeats {
            let t0 = Clock.now()
            try body()
            best = min(best, Clock.now() - t0)
        }
        return best / Double(count)
    }

    // MARK: Memory: YYCache's workload

    static func runMemory(_ settings: BenchSettings) throws {
        let n = settings.quick ? 50_000 : 200_000
        let repeats = settings.quick ? 2 : 3
        let keys = (0..<n).map { "key-\($0)" }
        let nsKeys = keys.map { NSString(string: $0) }
        let missKeys = (0..<n).map { "miss-\($0)" }
        let nsMissKeys = missKeys.map { NSString(string: $0) }
        var rng = SystemRandomNumberGenerator()
        let shuffled = Array(0..<n).shuffled(using: &rng)
        let boxes = (0..<n).map { NSNumber(value: $0) }
        var sink = 0

        typealias Phase = (name: String, ours: Double, dict: Double, ns: Double)
        var phases: [Phase] = []
        var oursSet = 0.0, dictSet = 0.0, nsSet = 0.0
        var oursAgain = 0.0, dictAgain = 0.0, nsAgain = 0.0
        var oursGet = 0.0, dictGet = 0.0, nsGet = 0.0
        var oursShuf = 0.0, dictShuf = 0.0, nsShuf = 0.0
        var oursMiss = 0.0, dictMiss = 0.0, nsMiss = 0.0
        for _ in 0..<repeats {
            let ours = MemoryCache<String, Int>()
            let dict = Mutex<[String: Int]>([:])
            let ns = NSCache<NSString, NSNumber>()
            func time(_ body: () -> Void) -> Double { let t0 = Clock.now(); body(); return (Clock.now() - t0) / Double(n) }
            func best(_ old: Double, _ new: Double) -> Double { old == 0 ? new : min(old, new) }
            oursSet = best(oursSet, time { for i in 0..<n { ours.setObject(i, forKey: keys[i]) } })
            dictSet = best(dictSet, time { for i in 0..<n { dict.withLock { $0[keys[i]] = i } } })
            nsSet = best(nsSet, time { for i in 0..<n { ns.setObject(boxes[i], forKey: nsKeys[i]) } })
            oursAgain = best(oursAgain, time { for i in 0..<n { ours.setObject(i, forKey: keys[i]) } })
            dictAgain = best(dictAgain, time { for i in 0..<n { dict.withLock { $0[keys[i]] = i } } })
            nsAgain = best(nsAgain, time { for i in 0..<n { ns.setObject(boxes[i], forKey: nsKeys[i]) } })
            oursGet = best(oursGet, time { for i in 0..<n { sink &+= ours.object(forKey: keys[i]) ?? 0 } })
            dictGet = best(dictGet, time { for i in 0..<n { sink &+= dict.withLock { $0[keys[i]] } ?? 0 } })
            nsGet = best(nsGet, time { for i in 0..<n { sink &+= ns.object(forKey: nsKeys[i])?.intValue ?? 0 } })
            oursShuf = best(oursShuf, time { for i in shuffled { sink &+= ours.object(forKey: keys[i]) ?? 0 } })
            dictShuf = best(dictShuf, time { for i in shuffled { sink &+= dict.withLock { $0[keys[i]] } ?? 0 } })
            nsShuf = best(nsShuf, time { for i in shuffled { sink &+= ns.object(forKey: nsKeys[i])?.intValue ?? 0 } })
            oursMiss = best(oursMiss, time { for i in 0..<n { sink &+= ours.object(forKey: missKeys[i]) ?? 0 } })
            dictMiss = best(dictMiss, time { for i in 0..<n { sink &+= dict.withLock { $0[missKeys[i]] } ?? 0 } })
            nsMiss = best(nsMiss, time { for i in 0..<n { sink &+= ns.object(forKey: nsMissKeys[i])?.intValue ?? 0 } })
        }
        phases = [("set", oursSet, dictSet, nsSet), ("set again", oursAgain, dictAgain, nsAgain),
                  ("get in order", oursGet, dictGet, nsGet), ("get shuffled", oursShuf, dictShuf, nsShuf),
                  ("miss", oursMiss, dictMiss, nsMiss)]
        for phase in phases {
            let label = "memory \(phase.name) \(n / 1_000)k"
            add("\(label) vs Mutex<Dictionary>", unit: "ns/op", ours: phase.ours * 1e9, peer: phase.dict * 1e9,
                peerName: "Mutex<Dictionary>", goal: "≤ 2.5× Dictionary", met: phase.ours <= 2.5 * phase.dict)
            add("\(label) vs NSCache", unit: "ns/op", ours: phase.ours * 1e9, peer: phase.ns * 1e9,
                peerName: "NSCache", goal: "≥ 2× faster than NSCache", met: phase.ours * 2 <= phase.ns)
        }
        if sink == 42 { print("") }
    }

    // MARK: Memory: eviction under a cost limit, Zipf get/set mix

    /// Zipf(s = 0.9) ranks over `n` keys, drawn by inverse CDF.
    static func zipfSequence(keys n: Int, count: Int) -> [Int] {
        var cdf = [Double](repeating: 0, count: n)
        var total = 0.0
        for rank in 0..<n {
            total += 1 / pow(Double(rank + 1), 0.9)
            cdf[rank] = total
        }
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let u = Double.random(in: 0..<total, using: &rng)
            var lo = 0, hi = n - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if cdf[mid] < u { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }

    static func runEviction(_ settings: BenchSettings) throws {
        let keyCount = 100_000
        let ops = settings.quick ? 200_000 : 1_000_000
        let sequence = zipfSequence(keys: keyCount, count: ops)
        // A random permutation so popular keys are not also the cheap ones.
        var rng = SystemRandomNumberGenerator()
        let permutation = Array(0..<keyCount).shuffled(using: &rng)
        let keys = (0..<keyCount).map { "key-\(permutation[$0])" }
        let nsKeys = keys.map { NSString(string: $0) }
        let costs = (0..<keyCount).map { _ in Int.random(in: 1...100, using: &rng) }
        let costLimit = 50 * keyCount / 10 // room for about 10 % of the keys

        let ours = MemoryCache<String, Int>()
        ours.costLimit = costLimit
        var oursHits = 0
        let t0 = Clock.now()
        for rank in sequence {
            if ours.object(forKey: keys[rank]) != nil { oursHits += 1 } else { ours.setObject(rank, forKey: keys[rank], cost: costs[rank]) }
        }
        let oursTime = (Clock.now() - t0) / Double(ops)

        let ns = NSCache<NSString, NSNumber>()
        ns.totalCostLimit = costLimit
        var nsHits = 0
        let t1 = Clock.now()
        for rank in sequence {
            if ns.object(forKey: nsKeys[rank]) != nil { nsHits += 1 } else { ns.setObject(NSNumber(value: rank), forKey: nsKeys[rank], cost: costs[rank]) }
        }
        let nsTime = (Clock.now() - t1) / Double(ops)

        let oursRatio = Double(oursHits) / Double(ops), nsRatio = Double(nsHits) / Double(ops)
        add("eviction Zipf get/set, cost limit: hit ratio", unit: "%", ours: oursRatio * 100, peer: nsRatio * 100,
            peerName: "NSCache", higherIsBetter: true, goal: "≥ NSCache", met: oursRatio >= nsRatio)
        add("eviction Zipf get/set, cost limit: time", unit: "ns/op", ours: oursTime * 1e9, peer: nsTime * 1e9,
            peerName: "NSCache", goal: "≥ 2× faster than NSCache", met: oursTime * 2 <= nsTime)
    }

    // MARK: Disk

    /// The SDWebImage design: one file per key, written whole and read whole. Plain POSIX calls with no
    /// `fsync` and no temporary file (Foundation's `createFile` on Linux syncs, which would flatter us).
    struct PlainFileStore {
        let folder: String
        init(folder: String) throws {
            self.folder = folder
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        func path(_ key: String) -> String { folder + "/" + key }
        func set(_ data: Data, forKey key: String) throws {
            let fd = open(path(key), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw BenchError.wrongResult("open \(key): errno \(errno)") }
            defer { close(fd) }
            let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == data.count else { throw BenchError.wrongResult("short write \(key)") }
        }
        func get(_ key: String) throws -> Data? {
            let fd = open(path(key), O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { return nil }
            var data = Data(count: Int(info.st_size))
            let got = data.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            return got == data.count ? data : nil
        }
    }

    struct DiskTimes { var write = 0.0, read = 0.0, miss = 0.0 }

    /// Times write, random read and miss of `count` values of `size` bytes: best of `repeats`.
    static func measure(count: Int, size: Int, repeats: Int, work: URL, label: String,
                        set: (String) throws -> ((Data, String) throws -> Void, (String) throws -> Data?)) throws -> DiskTimes {
        var rng = SystemRandomNumberGenerator()
        let values = (0..<8).map { seed in Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }) }
        let keys = (0..<count).map { "key-\($0)" }
        // Every key read twice in random order: 2 × count reads, so batched bookkeeping (DiskCache flushes
        // access times every 1,024 reads) is paid inside the timing.
        let order = keys.shuffled(using: &rng) + keys.shuffled(using: &rng)
        var best = DiskTimes(write: .infinity, read: .infinity, miss: .infinity)
        for run in 0..<repeats {
            let folder = work.appendingPathComponent("\(label)-\(run)-\(UUID().uuidString)").path
            // The store is released (closed) before its folder is removed: a store closing on a removed folder
            // logged a warning for each run.
            try {
                let (write, read) = try set(folder)
                let t0 = Clock.now()
                for (i, key) in keys.enumerated() { try write(values[i % 8], key) }
                let t1 = Clock.now()
                var bytes = 0
                for key in order { bytes += try read(key)?.count ?? 0 }
                let t2 = Clock.now()
                for key in keys { bytes += try read("miss-" + key)?.count ?? 0 }
                let t3 = Clock.now()
                guard bytes == 2 * count * size else { throw BenchError.wrongResult("\(label): read \(bytes) bytes") }
                best.write = min(best.write, (t1 - t0) / Double(count))
                best.read = min(best.read, (t2 - t1) / Double(order.count))
                best.miss = min(best.miss, (t3 - t2) / Double(count))
            }()
            try? FileManager.default.removeItem(atPath: folder)
        }
        return best
    }

    enum BenchError: Error { case wrongResult(String) }

    static func diskCacheAccessors(threshold: Int) -> (String) throws -> ((Data, String) throws -> Void, (String) throws -> Data?) {
        { folder in
            let cache = try DiskCache(path: folder, inlineThreshold: threshold)
            return ({ data, key in try cache.setObject(data, forKey: key) }, { key in try cache.object(forKey: key) })
        }
    }

    static func plainAccessors(_ folder: String) throws -> ((Data, String) throws -> Void, (String) throws -> Data?) {
        let store = try PlainFileStore(folder: folder)
        return ({ data, key in try store.set(data, forKey: key) }, { key in try store.get(key) })
    }

    static func runDisk(_ settings: BenchSettings) throws {
        let repeats = settings.quick ? 1 : 3
        for (count, size) in [(1_000, 128), (1_000, 4_096), (1_000, 100 * 1_024)] {
            let label = "disk \(count)×\(size >= 1_024 ? "\(size / 1_024) KB" : "\(size) B")"
            let ours = try measure(count: count, size: size, repeats: repeats, work: settings.workDirectory, label: "ours",
                                   set: diskCacheAccessors(threshold: DiskCache.defaultInlineThreshold))
            let plain = try measure(count: count, size: size, repeats: repeats, work: settings.workDirectory, label: "plain",
                                    set: plainAccessors)
            let small = size <= 4_096
            let goal = small ? "≥ 3× faster than file-per-key" : "≤ 1.1× file-per-key"
            func met(_ o: Double, _ p: Double) -> Bool { small ? o * 3 <= p : o <= 1.1 * p }
            add("\(label) write", ours: ours.write * 1e6, peer: plain.write * 1e6, peerName: "file per key", goal: goal, met: met(ours.write, plain.write))
            add("\(label) random read", ours: ours.read * 1e6, peer: plain.read * 1e6, peerName: "file per key", goal: goal, met: met(ours.read, plain.read))
            add("\(label) miss", ours: ours.miss * 1e6, peer: plain.miss * 1e6, peerName: "file per key", goal: nil, met: nil)
            if small { try addSQLiteFloor(count: count, size: size, label: label, ours: ours, work: settings.workDirectory) }
        }
    }

    /// What SQLite itself costs from C for the same inline workload (bench_sqlite_kv_floor): the floor under
    /// DiskCache's small writes and reads, with reads in one shared read transaction as KVStorage's
    /// snapshots do, and each in its own (the wal-index lock cost per read that snapshots remove).
    static func addSQLiteFloor(count: Int, size: Int, label: String, ours: DiskTimes, work: URL) throws {
        var write = 0.0, perReadTransaction = 0.0, shared = 0.0
        let path = work.appendingPathComponent("floor-\(UUID().uuidString).sqlite").path
        defer {
            for file in [path, path + ".b"] {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
        }
        guard bench_sqlite_kv_floor(path, path + ".b", Int32(count), Int32(size), Int32(2 * count), &write,
                                    &perReadTransaction, &shared) == 0
        else { throw BenchError.wrongResult("\(label): SQLite floor failed") }
        add("\(label) write vs SQLite upsert from C", ours: ours.write * 1e6, peer: write / 1e3,
            peerName: "SQLite from C", goal: nil, met: nil)
        add("\(label) random read vs SQLite SELECT from C, one read txn", ours: ours.read * 1e6, peer: shared / 1e3,
            peerName: "SQLite from C, shared read txn", goal: nil, met: nil)
        add("\(label) random read vs SQLite SELECT from C, txn per read", ours: ours.read * 1e6,
            peer: perReadTransaction / 1e3, peerName: "SQLite from C, txn per read", goal: nil, met: nil)
    }

    /// The value-size sweep that picks the default `inlineThreshold`: per size, `.sqlite`, `.file` and
    /// `.mixed` (default threshold) against file-per-key.
    static func runSweep(_ settings: BenchSettings) throws {
        let repeats = settings.quick ? 1 : 2
        let sizes = [4, 8, 16, 24, 32, 64, 128, 256].map { $0 * 1_024 }
        print("  sweep: size, write µs/op (sqlite / file / mixed / plain), read µs/op (sqlite / file / mixed / plain)")
        for size in sizes {
            let count = min(settings.quick ? 300 : 1_000, (settings.quick ? 24 : 96) * 1_048_576 / size)
            var times: [DiskTimes] = []
            for (label, accessors) in [("sqlite", diskCacheAccessors(threshold: .max)), ("file", diskCacheAccessors(threshold: 0)),
                                       ("mixed", diskCacheAccessors(threshold: DiskCache.defaultInlineThreshold)),
                                       ("plain", plainAccessors)] {
                times.append(try measure(count: count, size: size, repeats: repeats, work: settings.workDirectory,
                                         label: label, set: accessors))
            }
            print(String(format: "  sweep %4d KB: write %7.1f / %7.1f / %7.1f / %7.1f   read %7.1f / %7.1f / %7.1f / %7.1f",
                         size / 1_024, times[0].write * 1e6, times[1].write * 1e6, times[2].write * 1e6, times[3].write * 1e6,
                         times[0].read * 1e6, times[1].read * 1e6, times[2].read * 1e6, times[3].read * 1e6))
            let kb = "\(size / 1_024) KB"
            add("sweep \(kb) .sqlite write+read", ours: (times[0].write + times[0].read) * 1e6,
                peer: (times[3].write + times[3].read) * 1e6, peerName: "file per key", goal: nil, met: nil)
            add("sweep \(kb) .file write+read", ours: (times[1].write + times[1].read) * 1e6,
                peer: (times[3].write + times[3].read) * 1e6, peerName: "file per key", goal: nil, met: nil)
            add("sweep \(kb) .mixed write+read", ours: (times[2].write + times[2].read) * 1e6,
                peer: (times[3].write + times[3].read) * 1e6, peerName: "file per key", goal: nil, met: nil)
        }
    }
}
