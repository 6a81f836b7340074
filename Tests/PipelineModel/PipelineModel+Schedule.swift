import Dispatch
import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImage

/// One randomized schedule: its managers, queues, setters and prefetcher, the records of every request, and
/// the steps.
///
/// `@unchecked Sendable`: the mutable properties are only touched by the thread running the steps (setter steps
/// run inside `display.sync`, which that thread waits for); closures handed to the pipeline only touch the
/// mutex-guarded `violations` and `setterLatest` and the records (themselves guarded).
final class Schedule: @unchecked Sendable {
    /// A manager slot: slots 1 and 2 are released and made again mid-run; slot 0 (the prefetcher's) stays.
    struct Slot {
        var manager: ImageManager?
        let cachePath: String?
        let queue: Int
    }

    /// One `prefetch(_:)` call.
    final class PrefetchCall: Sendable {
        let urlCount: Int
        let startedCancelled: Bool
        let stopsAtStart: Int
        let isCancelledByModel = Mutex(false)
        let outcome = Mutex<(summary: ImagePrefetcher.Summary, stopsAtEnd: Int)?>(nil)
        let task = Mutex<Task<Void, Never>?>(nil)

        init(urlCount: Int, startedCancelled: Bool, stopsAtStart: Int) {
            self.urlCount = urlCount
            self.startedCancelled = startedCancelled
            self.stopsAtStart = stopsAtStart
        }
    }

    let seed: UInt64
    var random: SplitMix64
    let server: HTTPTestServer
    let directory: URL
    let queues: [FetchQueue]
    var suspended: [Bool]
    var slots: [Slot] = []
    let prefetcher: ImagePrefetcher
    let setters: [(setter: ImageSetter, display: DispatchQueue)]
    var setterRecords: [Int: RequestRecord] = [:]
    let setterLatest = Mutex<[Int: Int]>([:])
    var records: [RequestRecord] = []
    var operations: [Int: ImageOperation] = [:]
    var prefetchCalls: [PrefetchCall] = []
    let finished = DispatchGroup()
    let prefetchesFinished = DispatchGroup()
    /// `stopPrefetching` calls so far (they stop URLs for every caller).
    let stops = Counter()
    let violations = Mutex<[String]>([])
    let crop = ImageTransform(id: "crop8") { image, _ in
        guard image.width >= 8, image.height >= 8,
              let cropped = try? image.firstFrame.buffer.cropped(x: 0, y: 0, width: 8, height: 8) else { return nil }
        return Image(buffer: cropped, format: image.format)
    }

    init(seed: UInt64, server: HTTPTestServer) {
        self.seed = seed
        self.random = SplitMix64(seed: seed)
        self.server = server
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-model-\(seed)-\(UUID().uuidString)")
        queues = [FetchQueue(maxConcurrentTransfers: 2), FetchQueue(maxConcurrentTransfers: 1)]
        suspended = [false, false]
        setters = (0..<3).map { index in (ImageSetter(), DispatchQueue(label: "model.display.\(index)")) }
        let shared = directory.path
        let first: ImageManager
        do {
            first = ImageManager(cache: try ImageCache(path: shared), queue: queues[0])
        } catch {
            violations.withLock { $0.append("cache at \(shared) could not open: \(error)") }
            first = ImageManager(cache: nil, queue: queues[0])
        }
        prefetcher = ImagePrefetcher(manager: first, maxConcurrentRequests: 2)
        slots = [Slot(manager: first, cachePath: shared, queue: 0), Slot(manager: nil, cachePath: shared, queue: 1),
                 Slot(manager: nil, cachePath: nil, queue: 0)]
        for index in 1..<slots.count { slots[index].manager = makeManager(slots[index]) }
    }

    func violation(_ text: String) { violations.withLock { $0.append(text) } }

    private func makeManager(_ slot: Slot) -> ImageManager? {
        guard let path = slot.cachePath else { return ImageManager(cache: nil, queue: queues[slot.queue]) }
        do {
            return ImageManager(cache: try ImageCache(path: path), queue: queues[slot.queue])
        } catch {
            violation("cache at \(path) could not open: \(error)")
            return nil
        }
    }

    // MARK: Steps

    func step(_ number: Int) {
        switch random.next(upTo: 100) {
        case 0..<30: request()
        case 30..<44: setterRequest()
        case 44..<52: cancelRequest()
        case 52..<55: cancelSetter()
        case 55..<61: toggleSuspension()
        case 61..<65: changeConcurrencyOrOrder()
        case 65..<69: bulkPrefetch()
        case 69..<75: prefetchCall()
        case 75..<77: slots[random.next(upTo: 2)].manager?.cache?.memoryCache.handleMemoryWarning()
        case 77..<80: releaseOrRecreate()
        case 80..<82: toggleCacheSetting()
        default: waitForOldest()
        }
    }

    private func chance(_ percent: Int) -> Bool { random.next(upTo: 100) < percent }

    private func randomURL(anyKind: Bool = true) -> (URLKind, URL) {
        let kinds = anyKind ? URLKind.allCases : [.still, .animated, .progressive, .slow]
        let kind = kinds[random.next(upTo: kinds.count)]
        return (kind, server.url(kind.path(random.next(upTo: URLKind.variants))))
    }

    private func randomOptions() -> ImageOptions {
        var options: ImageOptions = []
        if chance(20) { options.insert(.ignoreAnimatedImage) }
        if chance(15) { options.insert(.ignoreImageDecoding) }
        if chance(15) { options.insert(.progressive) }
        if chance(15) { options.insert(.lowPriority) } else if chance(15) { options.insert(.highPriority) }
        if chance(5) { options.insert(.refreshImageCache) }
        if chance(10) { options.insert(.ignoreDiskCache) }
        if chance(5) { options.insert(.cacheMemoryOnly) }
        return options
    }

    /// A manager still alive (slot 0 always is).
    private func randomManager() -> ImageManager? {
        let alive = slots.compactMap(\.manager)
        return alive.isEmpty ? nil : alive[random.next(upTo: alive.count)]
    }

    private func makeRecord(_ kind: URLKind, _ url: URL, options: ImageOptions, thumbnail: Int?, transformed: Bool,
                            cache: ImageCache?, setter: Int? = nil) -> RequestRecord {
        let expected = RequestRecord.Expected(
            kind: kind, options: options, thumbnail: thumbnail, transformed: transformed,
            firstFrameOnly: options.contains(.ignoreAnimatedImage) || !(cache?.allowAnimatedImage ?? true),
            straightAlpha: options.contains(.ignoreImageDecoding) || !(cache?.decodeForDisplay ?? true))
        let label = "\(setter.map { "setter \($0) " } ?? "")\(url.path) options 0x\(String(options.rawValue, radix: 16))"
            + "\(thumbnail.map { " thumbnail \($0)" } ?? "")\(transformed ? " crop8" : "")"
        let record = RequestRecord(id: records.count, label: label, expected: expected, finished: finished)
        records.append(record)
        return record
    }

    private func request() {
        guard let manager = randomManager() else { return }
        let (kind, url) = randomURL()
        let options = randomOptions()
        let thumbnail = chance(25) ? [12, 16, 32][random.next(upTo: 3)] : nil
        let transformed = chance(15)
        let record = makeRecord(kind, url, options: options, thumbnail: thumbnail, transformed: transformed, cache: manager.cache)
        let progress = chance(30) ? record.progress : nil
        operations[record.id] = manager.requestImage(url: url, options: options, thumbnailPixelSize: thumbnail,
                                                     progress: progress, transform: transformed ? crop : nil,
                                                     completion: record.completion)
    }

    private func setterRequest() {
        guard let manager = randomManager() else { return }
        let index = random.next(upTo: setters.count)
        let (setter, display) = setters[index]
        let (kind, url) = randomURL()
        let options = randomOptions()
        let thumbnail = chance(20) ? [12, 16, 32][random.next(upTo: 3)] : nil
        let record = makeRecord(kind, url, options: options, thumbnail: thumbnail, transformed: false,
                                cache: manager.cache, setter: index)
        var progress: ImageProgress?
        if chance(30) {
            let recordProgress = record.progress
            progress = { [self] received, expected in
                if setterLatest.withLock({ $0[index] }) != record.id {
                    violation("setter \(index) passed on the progress of stale request \(record.id)")
                }
                recordProgress(received, expected)
            }
        }
        display.sync {
            supersede(setter: index)
            setterRecords[index] = record
            setterLatest.withLock { $0[index] = record.id }
            setter.setImage(with: url, options: options, thumbnailPixelSize: thumbnail, manager: manager, queue: display,
                            apply: { [self] image in
                                guard image != nil, setterLatest.withLock({ $0[index] }) != record.id else { return }
                                violation("setter \(index) applied the image of stale request \(record.id)")
                            }, progress: progress, completion: record.completion)
        }
    }

    /// The setter's current request, if not completed yet, must now end `.cancelled`. On the display queue.
    private func supersede(setter index: Int) {
        guard let previous = setterRecords[index] else { return }
        previous.received.withLock { r in if r.terminals.isEmpty { r.mustBeCancelled = true } }
    }

    private func cancelSetter() {
        let index = random.next(upTo: setters.count)
        let (setter, display) = setters[index]
        display.sync {
            supersede(setter: index)
            setterRecords[index] = nil
            setterLatest.withLock { $0[index] = -1 }
            setter.cancel()
        }
    }

    private func cancelRequest() {
        let live = operations.filter { !$0.value.isFinished }
        guard !live.isEmpty else { return }
        let ids = live.keys.sorted()
        operations[ids[random.next(upTo: ids.count)]]?.cancel()
    }

    private func toggleSuspension() {
        let index = random.next(upTo: queues.count)
        if suspended[index] { queues[index].resume() } else { queues[index].suspend() }
        suspended[index].toggle()
    }

    private func changeConcurrencyOrOrder() {
        let queue = queues[random.next(upTo: queues.count)]
        if chance(50) {
            queue.maxConcurrentTransfers = 1 + random.next(upTo: 4)
        } else {
            queue.order = queue.order == .fifo ? .lifo : .fifo
        }
    }

    private func randomURLs() -> [URL] {
        (0..<(1 + random.next(upTo: 3))).map { _ in randomURL().1 }
    }

    private func bulkPrefetch() {
        if chance(60) {
            prefetcher.startPrefetching(with: randomURLs())
        } else {
            stops.increment()
            prefetcher.stopPrefetching(with: randomURLs())
        }
    }

    private func prefetchCall() {
        let running = prefetchCalls.filter { $0.outcome.withLock { $0 == nil } && !$0.isCancelledByModel.withLock { $0 } }
        if !running.isEmpty, chance(40) {
            let call = running[random.next(upTo: running.count)]
            call.isCancelledByModel.withLock { $0 = true }
            call.task.withLock { $0 }?.cancel()
            return
        }
        let urls = randomURLs()
        let startsCancelled = chance(15)
        let call = PrefetchCall(urlCount: Set(urls).count, startedCancelled: startsCancelled,
                                stopsAtStart: stops.value)
        prefetchCalls.append(call)
        prefetchesFinished.enter()
        let (prefetcher, stops, group) = (self.prefetcher, self.stops, prefetchesFinished)
        let task = Task {
            if startsCancelled { withUnsafeCurrentTask { $0?.cancel() } }
            let summary = await prefetcher.prefetch(urls)
            call.outcome.withLock { $0 = (summary, stops.value) }
            group.leave()
        }
        call.task.withLock { $0 = task }
    }

    private func releaseOrRecreate() {
        let index = 1 + random.next(upTo: 2)
        if slots[index].manager != nil {
            slots[index].manager = nil  // its requests in flight must still complete
        } else {
            slots[index].manager = makeManager(slots[index])
        }
    }

    private func toggleCacheSetting() {
        guard let cache = slots[random.next(upTo: 2)].manager?.cache else { return }
        if chance(50) { cache.allowAnimatedImage.toggle() } else { cache.decodeForDisplay.toggle() }
    }

    /// With no queue suspended, the oldest request still pending must complete within the watchdog's deadline.
    private func waitForOldest() {
        guard !suspended.contains(true), let oldest = records.first(where: { !$0.isTerminated }) else { return }
        if oldest.done.wait(timeout: .now() + 20) == .timedOut {
            violation("watchdog: request \(oldest.id) (\(oldest.label)) pending 20 s while no queue is suspended")
            return
        }
        oldest.done.signal() // for the next wait on it
    }

    // MARK: End

    /// Resumes every queue, waits (with a deadline) for every request and prefetch call, and checks them all.
    func drain() {
        for (index, queue) in queues.enumerated() where suspended[index] {
            queue.resume()
            suspended[index] = false
        }
        if finished.wait(timeout: .now() + 60) == .timedOut {
            let stuck = records.filter { !$0.isTerminated }.prefix(5).map { "\($0.id) \($0.label)" }
            violation("watchdog: \(records.filter { !$0.isTerminated }.count) requests never completed with no queue "
                + "suspended, e.g. \(stuck)")
        }
        if prefetchesFinished.wait(timeout: .now() + 60) == .timedOut {
            violation("watchdog: a prefetch call never returned")
        }
        for (_, display) in setters { display.sync {} }
        for record in records { for problem in record.check() { violation(problem) } }
        for (index, call) in prefetchCalls.enumerated() {
            guard let (summary, stopsAtEnd) = call.outcome.withLock({ $0 }) else { continue }
            let total = summary.loaded + summary.alreadyCached + summary.failed + summary.cancelled
            if total != call.urlCount { violation("prefetch call \(index): \(total) outcomes for \(call.urlCount) URLs") }
            if call.startedCancelled, summary.cancelled != call.urlCount {
                violation("prefetch call \(index) in a cancelled task: \(summary)")
            }
            let stoppedForAll = stopsAtEnd != call.stopsAtStart
            if !call.startedCancelled, !call.isCancelledByModel.withLock({ $0 }), !stoppedForAll, summary.cancelled > 0 {
                violation("prefetch call \(index) cancelled by nobody reports \(summary.cancelled) cancelled")
            }
        }
    }

    func tearDown() {
        prefetcher.stopPrefetching()
        for queue in queues { queue.resume(); queue.cancelAll() }
        do { try FileManager.default.removeItem(at: directory) } catch { /* never created, or already gone */ }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
