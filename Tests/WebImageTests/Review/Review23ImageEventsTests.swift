import Dispatch
import Fetcher
import Foundation
import ImageCodec
import Synchronization
import TestSupport
@testable import WebImage
import XCTest

/// Adversarial review 23: `ImageManager.imageEvents` returning `ImageEvents` (its own `AsyncSequence`, with a
/// cancellation handler around `ImageEventBuffer.next()` and a canceller whose `deinit` cancels the request).
///
/// Every consumer here is judged by `drain`: a sequence must end either with `.finished` then `nil` (and `nil` again),
/// or by throwing `CancellationError` or a `WebImageError` once (then `nil`) — never `nil` without `.finished`,
/// never an event after the end, never a hang (each wait has a generous timeout and fails instead of hanging).
final class Review23ImageEventsTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown() }

    // MARK: Helpers

    /// How one consumer's sequence ended.
    enum End: Sendable, Equatable, CustomStringConvertible {
        /// `.finished`, then `nil` (twice).
        case finished(events: Int)
        /// `CancellationError`, then `nil`.
        case cancelled(events: Int)
        /// A `WebImageError`, then `nil`.
        case failed(String)
        /// `nil` without `.finished`: the defect the change set out to remove.
        case quietNil(events: Int)
        /// Anything else that breaks the contract (an event after the end, an error after `.finished`, …).
        case violation(String)

        var description: String {
            switch self {
            case .finished(let n): return "finished after \(n) events"
            case .cancelled(let n): return "CancellationError after \(n) events"
            case .failed(let e): return "WebImageError \(e)"
            case .quietNil(let n): return "nil WITHOUT .finished after \(n) events"
            case .violation(let v): return "violation: \(v)"
            }
        }

        var isAcceptable: Bool {
            switch self {
            case .finished, .cancelled, .failed: return true
            case .quietNil, .violation: return false
            }
        }
    }

    /// Iterates `events` to its end and checks how it ended (and that `next()` after the end returns `nil`).
    static func drain(_ events: ImageEvents, onEvent: (@Sendable (ImageEvent, Int) -> Void)? = nil) async -> End {
        var iterator = events.makeAsyncIterator()
        var count = 0
        var finished = 0
        do {
            while let event = try await iterator.next() {
                if finished > 0 { return .violation("an event after .finished") }
                count += 1
                if case .finished = event { finished += 1 }
                onEvent?(event, count)
            }
        } catch {
            if finished > 0 { return .violation("threw \(error) after .finished") }
            do {
                if try await iterator.next() != nil { return .violation("an event after the error \(error)") }
            } catch let again {
                return .violation("threw twice: \(error), then \(again)")
            }
            if error is CancellationError { return .cancelled(events: count) }
            if let error = error as? WebImageError { return .failed("\(error)") }
            return .violation("threw a foreign error \(error)")
        }
        guard finished == 1 else { return .quietNil(events: count) }
        do {
            if try await iterator.next() != nil { return .violation("an event after nil") }
            if try await iterator.next() != nil { return .violation("an event after nil (twice)") }
        } catch {
            return .violation("threw \(error) after nil")
        }
        return .finished(events: count)
    }

    final class Box<T: Sendable>: Sendable {
        let value: Mutex<T>
        init(_ value: T) { self.value = Mutex(value) }
    }

    /// `task`'s value, or nil (and a failed expectation) if it does not end within `timeout`.
    func value<T: Sendable>(of task: Task<T, Never>, within timeout: Double, _ what: String) async -> T? {
        let box = Box<T?>(nil)
        let done = expectation(description: what)
        Task {
            let value = await task.value
            box.value.withLock { $0 = value }
            done.fulfill()
        }
        await fulfillment(of: [done], timeout: timeout)
        return box.value.withLock { $0 }
    }

    /// Polls `condition` every 10 ms for up to `timeout` seconds; false (and a failure) if it never held.
    @discardableResult
    func poll(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
              _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        if condition() { return true }
        XCTFail("timed out after \(timeout) s waiting for: \(what)", file: file, line: line)
        return false
    }

    /// A manager whose FetchQueue runs one transfer at a time (so a leaked transfer starves every later one).
    func oneSlotManager(_ name: String) throws -> ImageManager {
        ImageManager(cache: try ImageCache(path: fixture.directory.path + "/" + name),
                     queue: FetchQueue(maxConcurrentTransfers: 1))
    }

    /// Loads `url` with the callback API and waits (up to `timeout`) for an image.
    func assertLoads(_ url: URL, with manager: ImageManager, within timeout: Double, _ what: String) async {
        let loaded = expectation(description: what)
        manager.requestImage(url: url, options: [.refreshImageCache]) { image, _, _, stage, _ in
            if stage == .finished, image != nil { loaded.fulfill() }
        }
        await fulfillment(of: [loaded], timeout: timeout)
    }

    /// A long drip (~45 s at 64 bytes every 0.1 s): a transfer that holds its slot until it is cancelled.
    func longDrip(_ path: String, progressive: Bool = false) throws -> URL {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: progressive)
        fixture.server.route(path, .drip(data, chunk: 64, interval: 0.1))
        return fixture.server.url(path)
    }

    static func buffer(of events: ImageEvents) -> ImageEventBuffer? {
        Mirror(reflecting: events).descendant("buffer") as? ImageEventBuffer
    }

    static func canceller(of events: ImageEvents) -> ImageEventCanceller? {
        Mirror(reflecting: events).descendant("canceller") as? ImageEventCanceller
    }

    static func seed(_ fallback: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["REVIEW23_SEED"].flatMap { UInt64($0) } ?? fallback
    }

    // MARK: Doc promises: the end

    /// `next()` after `.finished`, after a `WebImageError` and after `CancellationError` returns `nil` (no trap,
    /// no hang, no second error).
    func testNextAfterTheEndReturnsNilForEveryKindOfEnd() async throws {
        let ok = fixture.serve("/ok.png", try TestImages.png())
        fixture.server.route("/missing.png", .status(404))
        let drip = try longDrip("/cancel.jpg")
        let manager = fixture.manager

        let finished = await Review23ImageEventsTests.drain(manager.imageEvents(for: ok))
        if case .finished = finished {} else { XCTFail("ok.png: \(finished)") }

        let failed = await Review23ImageEventsTests.drain(manager.imageEvents(for: fixture.server.url("/missing.png")))
        if case .failed = failed {} else { XCTFail("404: \(failed)") }

        let task = Task { await Review23ImageEventsTests.drain(manager.imageEvents(for: drip)) }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let cancelled = await value(of: task, within: 10, "the cancelled consumer ended")
        if case .cancelled? = cancelled {} else { XCTFail("cancelled: \(String(describing: cancelled))") }
    }

    /// The doc of `imageEvents`: "Ending the iteration early cancels the request." With the sequence in a local
    /// `let` (`let events = manager.imageEvents(…); for try await e in events { … break }`), leaving the loop drops
    /// only the iterator; the sequence still holds the canceller, so the request (and its transfer slot) goes on
    /// until the sequence goes out of scope. A one-slot queue makes that visible: the next image never loads.
    func testBreakingOutOfALoopOverAHeldSequenceCancelsTheRequest() async throws {
        let drip = try longDrip("/held.jpg")
        let other = fixture.serve("/other.png", try TestImages.png())
        let manager = try oneSlotManager("held")
        let events = manager.imageEvents(for: drip)
        var seen = 0
        for try await event in events {
            seen += 1
            if case .progress = event { break }
        }
        XCTAssertEqual(seen, 1)
        // "Ending the iteration early cancels the request": the one slot is free again.
        await assertLoads(other, with: manager, within: 10,
                          "REVIEW23-DEFECT: after `break` over a held sequence the request still holds the only transfer slot")
        withExtendedLifetime(events) {}
    }

    // MARK: Cancel racing finish

    /// A cancel landing around the moment the request finishes — from the network, the memory cache or the disk
    /// cache. Every consumer must end with `.finished`+nil or `CancellationError`; never a quiet nil, never a hang.
    func testCancelRacingTheFinishNeverEndsQuietlyOrHangs() async throws {
        let seed = Review23ImageEventsTests.seed(0x5EED_2323)
        print("Review23 race seed: \(seed) (REVIEW23_SEED to replay)")
        var rng = SplitMix64(seed: seed)
        let png = try TestImages.png(width: 96, height: 64)
        fixture.server.route("/race.png", .bytes(png, contentType: "image/png"))
        let manager = fixture.manager
        let warm = fixture.server.url("/race.png?warm")
        _ = try await manager.image(for: warm)
        let disk = fixture.server.url("/race.png?disk")
        _ = try await manager.image(for: disk)
        guard let cache = manager.cache else { return XCTFail("no cache") }
        var tally: [String: Int] = [:]
        for i in 0..<180 {
            let url: URL
            switch i % 3 {
            case 0: url = fixture.server.url("/race.png?n=\(i)")                       // network
            case 1: url = warm                                                          // memory hit
            default:                                                                    // disk hit
                try cache.removeImage(forKey: manager.cacheKey(for: disk), type: .memory)
                url = disk
            }
            let task = Task { await Review23ImageEventsTests.drain(manager.imageEvents(for: url)) }
            let micros = UInt64(rng.next(upTo: 4_000))
            if micros > 0 { try await Task.sleep(nanoseconds: micros * 1_000) }
            task.cancel()
            guard let end = await value(of: task, within: 10, "race \(i) ended") else {
                XCTFail("race \(i) (seed \(seed)) hung"); return
            }
            XCTAssertTrue(end.isAcceptable, "race \(i) (mode \(i % 3), cancel after \(micros) µs, seed \(seed)): \(end)")
            let key: String
            switch end {
            case .finished: key = "finished"
            case .cancelled: key = "cancelled"
            default: key = end.description
            }
            tally["\(i % 3)-\(key)", default: 0] += 1
        }
        print("Review23 race tally: \(tally.sorted { $0.key < $1.key })")
    }

    /// A finish that lands while the task is being cancelled, with the consumer already waiting in `next()`, many
    /// times over with a short drip (the final event arrives through a delivery on the image queue).
    func testCancelRacingTheFinishOfADripWithAWaitingConsumer() async throws {
        let seed = Review23ImageEventsTests.seed(0xD81B)
        print("Review23 drip race seed: \(seed)")
        var rng = SplitMix64(seed: seed)
        let data = try TestImages.jpeg(width: 64, height: 48, progressive: true)
        fixture.server.route("/short.jpg", .drip(data, chunk: max(1, data.count / 3), interval: 0.01))
        let manager = fixture.manager
        var ends: [String: Int] = [:]
        for i in 0..<60 {
            let url = fixture.server.url("/short.jpg?n=\(i)")
            let task = Task { await Review23ImageEventsTests.drain(manager.imageEvents(for: url, options: [.progressive])) }
            try await Task.sleep(nanoseconds: UInt64(5_000_000 + rng.next(upTo: 40_000_000)))
            task.cancel()
            guard let end = await value(of: task, within: 10, "drip race \(i) ended") else { return }
            XCTAssertTrue(end.isAcceptable, "drip race \(i) (seed \(seed)): \(end)")
            ends[String(end.description.prefix(12)), default: 0] += 1
        }
        print("Review23 drip race tally: \(ends)")
    }

    // MARK: Queued events before the cancel

    /// A consumer slower than the download, cancelled: the events queued before the cancel come first (at most
    /// one partial image among them, no `.finished`), then `CancellationError`.
    func testACancelledSlowConsumerGetsTheQueuedEventsThenCancellationError() async throws {
        let data = try TestImages.jpeg(width: 800, height: 800, progressive: true)
        fixture.server.route("/slowp.jpg", .drip(data, chunk: max(1, data.count / 40), interval: 0.1))
        let url = fixture.server.url("/slowp.jpg")
        let manager = fixture.manager
        let partialsSeen = Box(0)
        // A joined caller tells when partial images have been made.
        let joined = manager.requestImage(url: url, options: [.progressive]) { image, _, _, stage, _ in
            if stage == .progress, image != nil { partialsSeen.value.withLock { $0 += 1 } }
        }
        defer { joined.cancel() }
        let events = manager.imageEvents(for: url, options: [.progressive])
        let gate = Box(false)
        let task = Task { () -> (End, [String]) in
            while !gate.value.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 5_000_000) }
            let kinds = Box<[String]>([])
            let end = await Review23ImageEventsTests.drain(events) { event, _ in
                let kind: String
                switch event {
                case .progress: kind = "progress"
                case .partial: kind = "partial"
                case .finished: kind = "finished"
                }
                kinds.value.withLock { $0.append(kind) }
            }
            return (end, kinds.value.withLock { $0 })
        }
        await poll("three partial images made", timeout: 20) { partialsSeen.value.withLock { $0 } >= 3 }
        task.cancel()
        gate.value.withLock { $0 = true }
        guard let (end, kinds) = await value(of: task, within: 10, "the slow consumer ended") else { return }
        print("Review23 slow cancelled consumer: \(kinds.count) events (\(kinds.filter { $0 == "partial" }.count) partial), \(end)")
        if case .cancelled = end {} else { XCTFail("ended with \(end)") }
        XCTAssertLessThanOrEqual(kinds.filter { $0 == "partial" }.count, 1, "more than one partial was held")
        XCTAssertFalse(kinds.contains("finished"))
        XCTAssertGreaterThan(kinds.count, 1, "the events queued before the cancel were dropped")
    }

    // MARK: Re-entrancy

    /// Cancelling the consumer task from inside another caller's progress callback (the network thread) and
    /// from inside a partial-image callback (an image queue): no deadlock, `CancellationError`.
    func testCancellingTheConsumerFromInsideCallbacks() async throws {
        for (path, options) in [("/reenter-progress.jpg", ImageOptions()), ("/reenter-partial.jpg", ImageOptions.progressive)] {
            let url = try longDrip(path, progressive: true)
            let manager = fixture.manager
            let events = manager.imageEvents(for: url, options: options)
            let task = Task { await Review23ImageEventsTests.drain(events) }
            let slot = Box<Task<End, Never>?>(task)
            let fired = Box(false)
            let joined = manager.requestImage(url: url, options: options, progress: { _, _ in
                guard options.isEmpty, !fired.value.withLock({ $0 }) else { return }
                fired.value.withLock { $0 = true }
                slot.value.withLock { $0 }?.cancel()
            }) { image, _, _, stage, _ in
                guard stage == .progress, image != nil, !fired.value.withLock({ $0 }) else { return }
                fired.value.withLock { $0 = true }
                slot.value.withLock { $0 }?.cancel()
            }
            guard let end = await value(of: task, within: 20, "\(path): consumer cancelled from a callback ended") else { return }
            if case .cancelled = end {} else { XCTFail("\(path): \(end)") }
            joined.cancel()
        }
    }

    /// Dropping the last reference to a never-iterated sequence from inside another caller's progress callback
    /// (the canceller's `deinit` runs on the network thread and cancels the request there).
    func testDroppingTheSequenceFromInsideACallback() async throws {
        let url = try longDrip("/drop-inside.jpg")
        let manager = fixture.manager
        let holder = Box<ImageEvents?>(manager.imageEvents(for: url))
        weak var weakBuffer: ImageEventBuffer?
        do { weakBuffer = holder.value.withLock { $0.flatMap(Review23ImageEventsTests.buffer(of:)) } }
        XCTAssertNotNil(weakBuffer)
        let dropped = expectation(description: "dropped inside a progress callback")
        let joined = manager.requestImage(url: url, progress: { _, _ in
            let events = holder.value.withLock { h -> ImageEvents? in defer { h = nil }; return h }
            if events != nil { dropped.fulfill() }
        }) { _, _, _, _, _ in }
        await fulfillment(of: [dropped], timeout: 10)
        await poll("the dropped sequence's buffer freed") { weakBuffer == nil }
        joined.cancel()
    }

    /// Two sequences sharing one transfer: cancelling one consumer leaves the other to finish.
    func testCancellingOneOfTwoSequencesOnOneTransferLeavesTheOther() async throws {
        let data = try TestImages.jpeg(width: 64, height: 48)
        fixture.server.route("/pair.jpg", .drip(data, chunk: max(1, data.count / 10), interval: 0.1))
        let url = fixture.server.url("/pair.jpg")
        let manager = fixture.manager
        let kept = Task { await Review23ImageEventsTests.drain(manager.imageEvents(for: url)) }
        let cancelled = Task { await Review23ImageEventsTests.drain(manager.imageEvents(for: url)) }
        try await Task.sleep(nanoseconds: 300_000_000)
        cancelled.cancel()
        let a = await value(of: cancelled, within: 10, "the cancelled one ended")
        let b = await value(of: kept, within: 10, "the kept one ended")
        if case .cancelled? = a {} else { XCTFail("cancelled one: \(String(describing: a))") }
        if case .finished? = b {} else { XCTFail("kept one: \(String(describing: b))") }
        XCTAssertEqual(fixture.server.requestCount(for: "/pair.jpg"), 1, "the two sequences did not share the transfer")
    }

    // MARK: Iterators

    /// Two iterators made one after the other from one sequence share the request: the second goes on where the
    /// first stopped, and the request delivers exactly one `.finished` in all.
    func testTwoIteratorsOneAfterTheOtherShareTheEvents() async throws {
        let data = try TestImages.jpeg(width: 64, height: 48)
        fixture.server.route("/two.jpg", .drip(data, chunk: max(1, data.count / 4), interval: 0.05))
        let events = fixture.manager.imageEvents(for: fixture.server.url("/two.jpg"))
        var first = events.makeAsyncIterator()
        let a = try await first.next()
        XCTAssertNotNil(a)
        let end = await Review23ImageEventsTests.drain(events)
        if case .finished = end {} else { XCTFail("the second iterator: \(end)") }
        let again = try await first.next()
        XCTAssertNil(again, "the first iterator after the second reached the end")
    }

    /// The doc says a second concurrent `next()` traps. Reachable by handing the (Sendable) sequence to two tasks;
    /// run in a child process to show it traps with the documented message (and does not corrupt or hang).
    func testTwoConcurrentConsumersTrapWithTheDocumentedMessage() throws {
        if ProcessInfo.processInfo.environment["REVIEW23_TRAP_CHILD"] != nil {
            let url = try longDrip("/trap.jpg")
            let events = fixture.manager.imageEvents(for: url)
            let first = Task { for try await _ in events {} }
            let second = Task { for try await _ in events {} }
            Thread.sleep(forTimeInterval: 5)
            first.cancel(); second.cancel()
            print("REVIEW23: no trap")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["WebImageTests.Review23ImageEventsTests/testTwoConcurrentConsumersTrapWithTheDocumentedMessage"]
        process.environment = ProcessInfo.processInfo.environment.merging(["REVIEW23_TRAP_CHILD": "1"]) { $1 }
        let outURL = fixture.directory.appendingPathComponent("trap-child.out")
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        let handle = try FileHandle(forWritingTo: outURL)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // Bounded: under ThreadSanitizer the parent once waited here for good (the child long gone); a test
        // never hangs the run, it fails.
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            XCTFail("the child did not end within 60 s")
            return
        }
        try handle.close()
        let status = process.terminationStatus
        let output = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let (stdout, stderr) = (output, "")
        XCTAssertNotEqual(status, 0, "two concurrent consumers did not trap:\n\(stdout.suffix(1_000))")
        XCTAssertTrue((stdout + stderr).contains("one consumer at a time"),
                      "not the documented trap: status \(status)\n\(stderr.suffix(1_500))")
    }

    /// Iterating from the main actor (Swift 6 mode): compiles and ends like anywhere else.
    @MainActor
    func testIteratingOnTheMainActor() async throws {
        let url = fixture.serve("/main.png", try TestImages.png())
        var finished = 0
        for try await event in fixture.manager.imageEvents(for: url) {
            if case .finished = event { finished += 1 }
        }
        XCTAssertEqual(finished, 1)
    }

    // MARK: Lifetimes

    /// A sequence made and never iterated: dropping it cancels the request and frees the only transfer slot.
    func testASequenceNeverIteratedCancelsItsRequestWhenDropped() async throws {
        let drip = try longDrip("/never.jpg")
        let other = fixture.serve("/after-never.png", try TestImages.png())
        let manager = try oneSlotManager("never")
        weak var weakBuffer: ImageEventBuffer?
        do {
            let events = manager.imageEvents(for: drip)
            weakBuffer = Review23ImageEventsTests.buffer(of: events)
            await poll("the transfer started") { fixture.server.requestCount(for: "/never.jpg") == 1 }
            withExtendedLifetime(events) {}
        }
        await assertLoads(other, with: manager, within: 10, "the slot freed by dropping a never-iterated sequence")
        await poll("the dropped buffer freed") { weakBuffer == nil }
    }

    /// The manager released while its request runs: the sequence still ends with `.finished`; and a consumer of
    /// a released manager's request, cancelled, throws `CancellationError`.
    func testTheManagerReleasedMidFlight() async throws {
        let data = try TestImages.jpeg(width: 64, height: 48)
        fixture.server.route("/orphan.jpg", .drip(data, chunk: max(1, data.count / 5), interval: 0.1))
        let stuck = try longDrip("/orphan-stuck.jpg")
        weak var weakManager: ImageManager?
        var events: ImageEvents?
        var stuckEvents: ImageEvents?
        do {
            let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path + "/orphan"), queue: fixture.queue)
            weakManager = manager
            events = manager.imageEvents(for: fixture.server.url("/orphan.jpg"))
            stuckEvents = manager.imageEvents(for: stuck)
        }
        await poll("the manager released") { weakManager == nil }
        guard let sequence = events, let stuckSequence = stuckEvents else { return }
        events = nil
        stuckEvents = nil
        let end = await value(of: Task { await Review23ImageEventsTests.drain(sequence) }, within: 10, "orphaned request ended")
        if case .finished? = end {} else { XCTFail("orphaned request: \(String(describing: end))") }
        let task = Task { await Review23ImageEventsTests.drain(stuckSequence) }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let cancelled = await value(of: task, within: 10, "orphaned cancelled request ended")
        if case .cancelled? = cancelled {} else { XCTFail("orphaned cancelled request: \(String(describing: cancelled))") }
    }

    /// Nothing is kept after the end: the buffer (held by the operation's completion) and the canceller are freed
    /// once the sequence is dropped — after `.finished`, after a failure, after a cancel.
    func testTheBufferAndCancellerAreFreedAfterEveryKindOfEnd() async throws {
        let ok = fixture.serve("/leak-ok.png", try TestImages.png())
        fixture.server.route("/leak-404.png", .status(404))
        let drip = try longDrip("/leak-drip.jpg", progressive: true)
        let manager = fixture.manager
        for (name, url, cancels) in [("finished", ok, false), ("failed", fixture.server.url("/leak-404.png"), false),
                                     ("cancelled", drip, true)] {
            weak var weakBuffer: ImageEventBuffer?
            weak var weakCanceller: ImageEventCanceller?
            do {
                let events = manager.imageEvents(for: url, options: [.progressive])
                weakBuffer = Review23ImageEventsTests.buffer(of: events)
                weakCanceller = Review23ImageEventsTests.canceller(of: events)
                XCTAssertNotNil(weakBuffer)
                let task = Task { await Review23ImageEventsTests.drain(events) }
                if cancels {
                    try await Task.sleep(nanoseconds: 400_000_000)
                    task.cancel()
                }
                let end = await value(of: task, within: 10, "\(name) ended")
                XCTAssertTrue(end?.isAcceptable ?? false, "\(name): \(String(describing: end))")
            }
            await poll("\(name): the canceller freed") { weakCanceller == nil }
            await poll("\(name): the buffer freed (the operation let go of its completion)") { weakBuffer == nil }
        }
    }

    // MARK: Volume

    /// 1,000 sequences made and dropped (each for its own URL, most while their transfer is queued, one while it
    /// holds the only slot): every request is cancelled, nothing is kept, and the one-slot queue serves a fresh
    /// image afterwards.
    func testAThousandSequencesMadeAndDropped() async throws {
        let data = try TestImages.jpeg(width: 640, height: 480)
        fixture.server.route("/many.jpg", .drip(data, chunk: 64, interval: 0.1))
        let other = fixture.serve("/after-many.png", try TestImages.png())
        let manager = try oneSlotManager("many")
        let weakBuffers = Box<[WeakBuffer]>([])
        do {
            var all: [ImageEvents] = []
            for i in 0..<1_000 {
                let events = manager.imageEvents(for: fixture.server.url("/many.jpg?n=\(i)"))
                if i % 10 == 0, let buffer = Review23ImageEventsTests.buffer(of: events) { weakBuffers.value.withLock { $0.append(WeakBuffer(buffer)) } }
                if i % 2 == 0 { all.append(events) } // half are dropped at once, half after the first transfer started
            }
            await poll("a transfer started") { fixture.server.requestCount(for: "/many.jpg") >= 1 }
            all.removeAll()
        }
        await assertLoads(other, with: manager, within: 10, "a fresh request after 1,000 dropped sequences")
        await poll("every dropped buffer freed") { weakBuffers.value.withLock { $0.allSatisfy { $0.buffer == nil } } }
        print("Review23 1000 dropped: \(fixture.server.requestCount(for: "/many.jpg")) transfers reached the server")
    }

    final class WeakBuffer: @unchecked Sendable { // only read after the writes, under the Box's lock
        weak var buffer: ImageEventBuffer?
        init(_ buffer: ImageEventBuffer) { self.buffer = buffer }
    }

    /// 64 concurrent consumers on a one-slot queue, each cancelled at a seeded random moment (or not at all for a
    /// fast image): fast images, long drips (some sharing one transfer), progressive ones and 404s. Every one ends
    /// with `.finished`+nil, `CancellationError` or a `WebImageError`; nothing hangs; the slot serves a fresh image
    /// afterwards and every buffer is freed.
    func testSixtyFourConsumersCancelledAtRandom() async throws {
        let seed = Review23ImageEventsTests.seed(0x64C0_FFEE)
        print("Review23 64 consumers seed: \(seed) (REVIEW23_SEED to replay)")
        var rng = SplitMix64(seed: seed)
        let manager = try oneSlotManager("sixty-four")
        fixture.server.route("/fast.png", .bytes(try TestImages.png(), contentType: "image/png"))
        fixture.server.route("/missing.png", .status(404))
        let drip = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/long.jpg", .drip(drip, chunk: 64, interval: 0.1))
        let shared = fixture.server.url("/long.jpg?shared")
        let other = fixture.serve("/after-64.png", try TestImages.png(seed: 9))
        var tasks: [(kind: Int, cancelAfter: Int?, task: Task<End, Never>)] = []
        let weakBuffers = Box<[WeakBuffer]>([])
        for i in 0..<64 {
            let kind = rng.next(upTo: 5)
            let url: URL
            var options: ImageOptions = []
            switch kind {
            case 0: url = fixture.server.url("/fast.png?n=\(i)")
            case 1: url = fixture.server.url("/missing.png?n=\(i)")
            case 2: url = fixture.server.url("/long.jpg?n=\(i)")
            case 3: url = shared
            default: url = fixture.server.url("/long.jpg?p=\(i)"); options = [.progressive]
            }
            // Drips are always cancelled (they would hold the slot for ~45 s); fast ones and 404s sometimes not.
            let cancelAfter: Int? = (kind <= 1 && rng.next(upTo: 3) == 0) ? nil : rng.next(upTo: 600)
            let events = manager.imageEvents(for: url, options: options)
            if let buffer = Review23ImageEventsTests.buffer(of: events) { weakBuffers.value.withLock { $0.append(WeakBuffer(buffer)) } }
            let task = Task { await Review23ImageEventsTests.drain(events) }
            tasks.append((kind, cancelAfter, task))
        }
        let start = Date()
        for (index, entry) in tasks.enumerated().sorted(by: { ($0.element.cancelAfter ?? 0) < ($1.element.cancelAfter ?? 0) }) {
            guard let ms = entry.cancelAfter else { continue }
            let wait = Double(ms) / 1_000 - Date().timeIntervalSince(start)
            if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            tasks[index].task.cancel()
        }
        var tally: [String: Int] = [:]
        for (index, entry) in tasks.enumerated() {
            guard let end = await value(of: entry.task, within: 15, "consumer \(index) ended") else {
                return XCTFail("consumer \(index) (kind \(entry.kind), seed \(seed)) hung")
            }
            XCTAssertTrue(end.isAcceptable, "consumer \(index) (kind \(entry.kind), cancel \(String(describing: entry.cancelAfter)) ms, seed \(seed)): \(end)")
            if entry.cancelAfter == nil, entry.kind == 0 {
                if case .finished = end {} else { XCTFail("consumer \(index): a fast image never cancelled ended with \(end)") }
            }
            let key: String
            switch end {
            case .finished: key = "finished"
            case .cancelled: key = "cancelled"
            case .failed: key = "failed"
            default: key = "BAD"
            }
            tally["kind\(entry.kind)-\(key)", default: 0] += 1
        }
        print("Review23 64 consumers tally: \(tally.sorted { $0.key < $1.key })")
        await assertLoads(other, with: manager, within: 10, "a fresh request after 64 cancelled consumers")
        await poll("every buffer freed") { weakBuffers.value.withLock { $0.allSatisfy { $0.buffer == nil } } }
    }
}
