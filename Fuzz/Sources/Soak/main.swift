// The soak run (`make soak`): SOAK_SECONDS of mixed image requests with random cancellations through
// ImageManager against a misbehaving loopback server, then a report of memory drift and leaked descriptors.
//
// Phases: warm-up (a quarter of the time, at most 90 s: fills the memory and disk caches, starts the network
// thread), drain, baseline (RSS and open descriptors); the main run; drain, final figures. Draining waits
// for every completion (a missing one is a failure), for the network to go idle and the server's
// connections to close. Exit status 1 when RSS grew by 10 % or more, a descriptor leaked or a completion
// never came.
//
//   Soak [--seconds N] [--concurrency N]
import Foundation
import Logging
import Synchronization
import WebImage

struct Settings {
    var seconds = 600.0
    var concurrency = 32

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--seconds": seconds = Double(iterator.next() ?? "") ?? seconds
            case "--concurrency": concurrency = Int(iterator.next() ?? "") ?? concurrency
            default:
                say("usage: Soak [--seconds N] [--concurrency N]   (e.g. Soak --seconds 120)")
                exit(2)
            }
        }
    }
}

/// Counts of outcomes. Thread-safe (atomics).
final class Tally: Sendable {
    let issued = Atomic<Int>(0)
    let images = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let cancelled = Atomic<Int>(0)
    let fromMemory = Atomic<Int>(0)
    let fromDisk = Atomic<Int>(0)

    var line: String {
        "issued \(issued.load(ordering: .relaxed)), images \(images.load(ordering: .relaxed)) " +
            "(memory \(fromMemory.load(ordering: .relaxed)), disk \(fromDisk.load(ordering: .relaxed))), " +
            "errors \(errors.load(ordering: .relaxed)), cancelled \(cancelled.load(ordering: .relaxed))"
    }
}

func run(_ settings: Settings) throws -> Int32 {
    let kinds = ["ok", "ok", "ok", "slow", "reset", "truncated", "garbage", "chunked", "badchunk", "error", "hang", "badlength"]
    let server = try MisbehavingServer(images: try SoakImages.make())
    let folder = NSTemporaryDirectory() + "webimage-soak-\(getpid())"
    defer {
        do { try FileManager.default.removeItem(atPath: folder) } catch { say("soak: cannot remove \(folder): \(error)") }
    }
    let cache = try ImageCache(path: folder)
    // Small limits, so the caches are full (and evicting) before the warm-up ends.
    cache.memoryCache.costLimit = 8 << 20
    cache.diskCache.costLimit = 4 << 20
    cache.diskCache.autoTrimInterval = 2
    let manager = ImageManager(cache: cache)
    manager.timeout = 2
    let tally = Tally()
    let slots = DispatchSemaphore(value: settings.concurrency)
    var generator = SplitMix64(seed: 0x50A4)
    say("soak: \(Int(settings.seconds)) s, \(settings.concurrency) in flight, server on 127.0.0.1:\(server.port), cache \(folder)")

    /// Issues requests until `end`; returns false if a completion never came while draining.
    func phase(until end: Date, label: String) -> Bool {
        var nextReport = Date().addingTimeInterval(10)
        while Date() < end {
            guard slots.wait(timeout: .now() + 30) == .success else {
                say("soak: no completion for 30 s while issuing")
                return false
            }
            let kind = kinds[Int(generator.next() % UInt64(kinds.count))]
            let url = URL(string: "http://127.0.0.1:\(server.port)/\(kind)/\(generator.next() % 300)")!
            var options: ImageOptions = []
            switch generator.next() % 8 {
            case 0: options.insert(.refreshImageCache)
            case 1: options.insert(.ignoreDiskCache)
            case 2: options.insert(.progressive)
            case 3: options.insert(.ignoreFailedURL)
            default: options.insert(.ignoreFailedURL)
            }
            let thumbnail: Int? = generator.next() % 4 == 0 ? 64 : nil
            tally.issued.add(1, ordering: .relaxed)
            let operation = manager.requestImage(url: url, options: options, thumbnailPixelSize: thumbnail) {
                image, _, source, stage, _ in
                guard stage != .progress else { return }
                if stage == .cancelled {
                    tally.cancelled.add(1, ordering: .relaxed)
                } else if image != nil {
                    tally.images.add(1, ordering: .relaxed)
                    if source == .memoryCache { tally.fromMemory.add(1, ordering: .relaxed) }
                    if source == .diskCache { tally.fromDisk.add(1, ordering: .relaxed) }
                } else {
                    tally.errors.add(1, ordering: .relaxed)
                }
                slots.signal()
            }
            switch generator.next() % 10 {
            case 0: operation.cancel()
            case 1, 2:
                let delay = Double(generator.next() % 300) / 1000
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { operation.cancel() }
            default: break
            }
            if Date() >= nextReport {
                say("soak [\(label)]: \(tally.line); RSS \(ProcessStats.residentKiB()) KiB, fds \(ProcessStats.openDescriptors())")
                nextReport = Date().addingTimeInterval(10)
            }
        }
        // Drain: every slot back means every completion came.
        for taken in 0..<settings.concurrency {
            guard slots.wait(timeout: .now() + 30) == .success else {
                say("soak: \(settings.concurrency - taken) completions never came")
                return false
            }
        }
        for _ in 0..<settings.concurrency { slots.signal() }
        // Let the network go idle and the server's connections close (bounded poll, 15 s).
        let quietBy = Date().addingTimeInterval(15)
        while Date() < quietBy && (manager.networkActivityCount > 0 || server.openConnections.load(ordering: .acquiring) > 0) {
            usleep(50_000)
        }
        return true
    }

    let start = Date()
    let warmUp = min(90, settings.seconds / 4)
    guard phase(until: start.addingTimeInterval(warmUp), label: "warm-up") else { return 1 }
    let baseRSS = ProcessStats.residentKiB()
    let baseFDs = ProcessStats.openDescriptors()
    let baseTargets = ProcessStats.descriptorTargets()
    say("soak: baseline after \(Int(warmUp)) s warm-up: RSS \(baseRSS) KiB, \(baseFDs) descriptors; \(tally.line)")
    guard phase(until: start.addingTimeInterval(settings.seconds), label: "run") else { return 1 }
    let endRSS = ProcessStats.residentKiB()
    let endFDs = ProcessStats.openDescriptors()
    let drift = Double(endRSS - baseRSS) / Double(max(baseRSS, 1)) * 100
    say("soak: done after \(Int(Date().timeIntervalSince(start))) s; \(tally.line)")
    say(String(format: "soak: RSS %d KiB -> %d KiB, drift %+.1f %% (goal < 10 %%)", baseRSS, endRSS, drift))
    say("soak: descriptors \(baseFDs) -> \(endFDs), leaked \(max(0, endFDs - baseFDs)) (goal 0)")
    if endFDs > baseFDs {
        for (fd, target) in ProcessStats.descriptorTargets().sorted(by: { $0.key < $1.key }) where baseTargets[fd] != target {
            say("soak:   new fd \(fd) -> \(target)")
        }
    }
    server.stop()
    return drift < 10 && endFDs <= baseFDs ? 0 : 1
}

// Every failed request is logged at info level by design; only warnings and errors matter here.
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}
do {
    exit(try run(Settings(arguments: CommandLine.arguments)))
} catch {
    say("soak: \(error)")
    exit(1)
}
