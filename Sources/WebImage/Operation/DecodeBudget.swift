import Dispatch
import Fetcher
import Foundation
import ImageCodec

/// A budget for the memory of the decodes running at the same time: a decode starts only while its declared
/// bitmap (read from the header, before anything is allocated) fits what the decodes in flight leave; the
/// others wait, highest priority first and first come, first served within a priority. So 64 concurrent
/// requests for 8000 × 8000 images hold at most `capacity` bytes of bitmaps being decoded, not 16 GB.
///
/// - A decode larger than the whole budget still runs, alone: when nothing else is in flight (so a big image is
///   slow under load, never refused).
/// - Waiting never blocks a thread: the work is queued and later dispatched to the queue it asked for when
///   budget frees.
/// - Order is strict: when the first waiter does not fit, smaller ones behind it wait too (no starvation of
///   large images).
/// - A waiting decode that is cancelled leaves the queue at once; its cancel handler runs exactly once, and
///   its work never does.
///
/// Every `ImageManager` has one (`ImageManager.decodeBudget`); give several managers the same budget to share
/// it. Decodes outside a manager (`ImageDecoder`, `ImageCache.getImage`) are not counted.
///
/// The bitmap of a progressive download (`.progressive`, `.progressiveBlur`) is held for as long as the
/// download lasts, so it is counted too, but never waited for: it takes budget only when it fits at once within
/// `partialShare` of the capacity (`reserveForPartialImages(cost:)`); otherwise that request shows no partial
/// images, and its final decode waits as any other.
///
/// ```swift
/// let budget = DecodeBudget(capacity: 512 << 20)
/// let manager = ImageManager(cache: cache, decodeBudget: budget)
/// ```
///
/// - Important: Thread-safe. User work and cancel handlers never run under the budget's lock.
public final class DecodeBudget: Sendable {
    /// The most bytes of bitmaps decoded at the same time (a single larger decode runs alone).
    public let capacity: Int

    private let state = Mutex(State())

    private struct State {
        var inUse = 0
        var running = 0
        /// Bytes of `inUse` held by progressive downloads' bitmaps (not counted in `running`).
        var partialsInUse = 0
        var nextID: UInt64 = 0
        /// Sorted: higher priority first, then by id (arrival).
        var waiting: [Waiter] = []
    }

    private struct Waiter {
        let id: UInt64
        let cost: Int
        var priority: Int
        let queue: DispatchQueue
        let work: @Sendable (Reservation) -> Void
        let onCancel: (@Sendable () -> Void)?
    }

    /// Share of the process's memory (RAM, or the cgroup limit when smaller) for decodes in flight: 20 %.
    public static let memoryShare = 0.20
    /// Cap on the default capacity: 1 GiB (four 8000 × 8000 RGBA8 bitmaps).
    public static let capacityCap = 1 << 30
    /// Floor on the default capacity: 64 MiB.
    public static let capacityFloor = 64 << 20

    /// The share of the capacity the bitmaps of progressive downloads may hold together: one half, so the
    /// final decodes always keep the other half, however many slow progressive downloads run.
    public static let partialShare = 0.5

    /// The default capacity for a process that may use `bytes` of memory: 20 %, between 64 MiB and 1 GiB.
    /// On a 24 GB machine 1 GiB; in a 1 GB container 205 MB (one 8000 × 8000 decode at a time).
    public static func defaultCapacity(forProcessMemory bytes: Int64) -> Int {
        let share = Int(min(Double(max(bytes, 0)) * memoryShare, Double(capacityCap)))
        return max(share, capacityFloor)
    }

    /// Makes a budget of `capacity` bytes. Default (`nil`): `defaultCapacity(forProcessMemory:)` of this
    /// process's memory (RAM, or the cgroup limit when smaller).
    public init(capacity: Int? = nil) {
        self.capacity = max(1, capacity ?? Self.defaultCapacity(forProcessMemory: SystemMemory.totalBytes))
    }

    /// Bytes reserved by the decodes running now and by progressive downloads' partial images.
    public var bytesInUse: Int { state.withLock { $0.inUse } }
    /// Bytes of `bytesInUse` reserved by progressive downloads' partial images.
    public var bytesInUseByPartialImages: Int { state.withLock { $0.partialsInUse } }
    /// Decodes running now.
    public var runningCount: Int { state.withLock { $0.running } }
    /// Decodes waiting for budget.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `work` once `cost` bytes fit: at once on the calling thread when they fit now and nobody waits,
    /// else later on `queue`. `work` must call `release()` on its reservation when its bitmap is no longer
    /// being decoded (releasing twice is harmless; never releasing leaks the budget).
    ///
    /// - Parameters:
    ///   - cost: the bytes the work holds (its bitmap, its canvases); a cost above the whole capacity runs alone.
    ///   - priority: higher runs first among waiters (e.g. `FetchPriority.rawValue`).
    ///   - queue: where `work` runs when it was not granted at once.
    ///   - onCancel: runs exactly once if the returned ticket is cancelled while waiting.
    ///   - work: the decode; it gets the reservation to release.
    /// - Returns: a ticket that cancels the wait.
    @discardableResult
    public func run(cost: Int, priority: Int = FetchPriority.normal.rawValue, on queue: DispatchQueue,
                    onCancel: (@Sendable () -> Void)? = nil,
                    _ work: @escaping @Sendable (Reservation) -> Void) -> Ticket {
        let cost = max(0, cost)
        let (id, grantedNow) = state.withLock { s -> (UInt64, Bool) in
            s.nextID += 1
            let id = s.nextID
            if s.waiting.isEmpty, Self._fits(cost, in: s, capacity: capacity) {
                s.inUse += cost
                s.running += 1
                return (id, true)
            }
            let waiter = Waiter(id: id, cost: cost, priority: priority, queue: queue, work: work, onCancel: onCancel)
            let index = s.waiting.firstIndex { $0.priority < priority } ?? s.waiting.endIndex
            s.waiting.insert(waiter, at: index)
            return (id, false)
        }
        let ticket = Ticket(id: id, budget: self)
        if grantedNow { work(Reservation(budget: self, cost: cost)) }
        return ticket
    }

    /// Reserves `cost` bytes for the bitmap of a progressive download's partial images, at once or not at
    /// all: only while nobody waits, the bytes fit what the decodes in flight leave, and the partial images
    /// of all downloads stay within `partialShare` of the capacity (never the "alone" exception of `run`: the
    /// reservation lasts as long as a download, and must not hold back the final decodes). Release it when
    /// the partial decoder is freed.
    /// Returns `nil` when it does not fit now: the caller then shows no partial images.
    public func reserveForPartialImages(cost: Int) -> Reservation? {
        let cost = max(0, cost)
        let share = Int(Double(capacity) * Self.partialShare)
        let granted = state.withLock { s -> Bool in
            guard s.waiting.isEmpty, cost <= capacity - s.inUse, cost <= share - s.partialsInUse else { return false }
            s.inUse += cost
            s.partialsInUse += cost
            return true
        }
        return granted ? Reservation(budget: self, cost: cost, isPartial: true) : nil
    }

    /// Whether `cost` fits now: within the capacity, or alone.
    private static func _fits(_ cost: Int, in s: State, capacity: Int) -> Bool {
        s.running == 0 || cost <= capacity - s.inUse
    }

    /// Gives back `cost` bytes (of a decode, or of partial images) and starts the waiters that now fit, in order.
    fileprivate func release(_ cost: Int, isPartial: Bool) {
        let granted = state.withLock { s -> [Waiter] in
            s.inUse -= cost
            if isPartial { s.partialsInUse -= cost } else { s.running -= 1 }
            return _grantFitting(&s)
        }
        start(granted)
    }

    /// Takes the waiters at the head of the queue that fit now (lock held).
    private func _grantFitting(_ s: inout State) -> [Waiter] {
        var granted: [Waiter] = []
        while let first = s.waiting.first, Self._fits(first.cost, in: s, capacity: capacity) {
            s.waiting.removeFirst()
            s.inUse += first.cost
            s.running += 1
            granted.append(first)
        }
        return granted
    }

    /// Runs granted waiters on their queues (never on the caller's thread: no user code under a caller's lock).
    private func start(_ granted: [Waiter]) {
        for waiter in granted {
            let reservation = Reservation(budget: self, cost: waiter.cost)
            waiter.queue.async { waiter.work(reservation) }
        }
    }

    /// Moves a waiter to its place for `priority` (after the waiters of the same or higher priority), then
    /// starts what fits at the new head. Does nothing once the waiter has started or left.
    fileprivate func reprioritize(_ id: UInt64, to priority: Int) {
        let granted = state.withLock { s -> [Waiter] in
            guard let index = s.waiting.firstIndex(where: { $0.id == id }), s.waiting[index].priority != priority else {
                return []
            }
            var waiter = s.waiting.remove(at: index)
            waiter.priority = priority
            let place = s.waiting.firstIndex { $0.priority < priority } ?? s.waiting.endIndex
            s.waiting.insert(waiter, at: place)
            return _grantFitting(&s)
        }
        start(granted)
    }

    /// Removes a waiter; `true` when it was still waiting (its cancel handler then ran).
    fileprivate func cancel(_ id: UInt64) -> Bool {
        let removed = state.withLock { s -> Waiter? in
            guard let index = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiting.remove(at: index)
        }
        guard let removed else { return false }
        removed.onCancel?()
        return true
    }

    /// Bytes of budget granted to one running decode.
    ///
    /// - Important: Thread-safe; `release()` takes effect once.
    public final class Reservation: Sendable {
        /// The bytes reserved.
        public let cost: Int
        private let budget: DecodeBudget
        private let isPartial: Bool
        private let released = Mutex(false)

        fileprivate init(budget: DecodeBudget, cost: Int, isPartial: Bool = false) {
            self.budget = budget
            self.cost = cost
            self.isPartial = isPartial
        }

        /// Gives the bytes back and starts the waiters that now fit. Only the first call counts.
        public func release() {
            let first = released.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { budget.release(cost, isPartial: isPartial) }
        }
    }

    /// A request for budget; cancel it to leave the wait queue.
    ///
    /// - Important: Thread-safe.
    public final class Ticket: Sendable {
        private let id: UInt64
        private let budget: DecodeBudget

        fileprivate init(id: UInt64, budget: DecodeBudget) {
            self.id = id
            self.budget = budget
        }

        /// Leaves the wait queue if still waiting: the work will never run and the cancel handler runs now, on
        /// this thread. Returns `false` when the work was already started (or the ticket already cancelled).
        @discardableResult
        public func cancel() -> Bool { budget.cancel(id) }

        /// Changes the priority of the wait (e.g. a `.highPriority` caller joined a shared load): the request
        /// moves behind the waiters of the same or a higher priority. Does nothing once its work has started.
        /// The work, if it can start now, runs on its queue, never on this thread.
        public func updatePriority(_ priority: Int) { budget.reprioritize(id, to: priority) }
    }
}

extension DecodeBudget {
    /// The bytes a decode of `data` with `options` allocates for its bitmaps, from the header alone, so that
    /// the budget counts what the decoder really holds, not the size of what it returns:
    /// - a still image: the full frame, plus the colour stage's 16-bit temporary when a 16-bit PNG or a 10/12-bit
    ///   AVIF or HEIF image is converted at 16 bits (`ImageDecoder.colorTemporaryByteCount(of:options:)`: 8 bytes
    ///   a pixel);
    /// - an animation decoded whole: three canvases (libwebp's `WebPAnimDecoder` keeps a current and a
    ///   previous canvas and the first frame is copied out of them; APNG and GIF hold their canvas, the frame
    ///   handed out and the area a disposal saves or the frame being drawn), plus every frame with
    ///   `preloadAllFrames`;
    /// - a thumbnail: the thumbnail plus its intermediates (JPEG's DCT-scaled image, an interlaced PNG at full
    ///   size, a GIF's index raster), and for an animation (APNG, animated WebP) its first frame, which may be
    ///   as large as the canvas, and the box grid its still is made on (`FirstFrameThumbnail`); an animation of
    ///   another codec composites its first frame at canvas size and resizes it (two canvases); a 10/12-bit AVIF
    ///   or HEIF still converted at 16 bits, its 16-bit copy and the grid it is averaged to.
    /// An unreadable header, or one over `options.limits`, counts 0: that decode fails at once, before
    /// allocating.
    public static func estimatedCost(of data: Data, options: DecodeOptions) -> Int {
        guard let info = try? ImageDecoder.info(data) else { return 0 }
        let (width, height) = (info.width, info.height)
        let fullFrame = saturating(width, height, 4)
        let limits = options.limits
        let isAnimation = info.frameCount > 1
        if let maxPixelSize = options.maxPixelSize, maxPixelSize < max(width, height) {
            let workCap = limits.maxPixelsPerFrame.multipliedReportingOverflow(by: 4)
            guard max(width, height) <= limits.maxDimension,
                  workCap.overflow || saturating(width, height, 1) <= workCap.partialValue else { return 0 }
            let thumbnail = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: maxPixelSize)
            let output = saturating(thumbnail.width, thumbnail.height, 4)
            // The box grid of a still made without a full-size buffer: at most 2× the thumbnail per side, 16
            // bytes a cell, plus its box-filtered image and the resize's intermediate (4 bytes a cell each).
            let grid = saturating(2 * thumbnail.width, 2 * thumbnail.height, 24)
            switch info.format {
            case .jpeg:
                // The decoder's own choice of DCT scale (it leaves the Lanczos a 2× margin).
                let scaled = JPEGDecoder.thumbnailIntermediateSize(width: width, height: height, maxPixelSize: maxPixelSize)
                // Without `resizesToFit` the DCT-scaled image is the result: no thumbnail beside it.
                return options.resizesToFit ? adding(output, saturating(scaled.width, scaled.height, 4))
                    : saturating(scaled.width, scaled.height, 4)
            case .gif: return adding(output, saturating(width, height, 1), grid)
            case .apng where isAnimation, .webp where isAnimation: return adding(output, fullFrame, grid)
            case .png where !options.resizesToFit && !info.isProgressive:
                // Shrink-on-load: the block averages are the result, and a second copy of them while they are
                // converted to the requested pixel format (straight RGBA when a colour transform follows; counted
                // always, as the estimate does not know the file's colour tags), plus a straight, a premultiplied
                // and a 16-bit row.
                let f = PNGDecoder.shrinkOnLoadFactor(width: width, height: height, maxPixelSize: maxPixelSize)
                guard f > 1 else { return output }
                return adding(saturating((width + f - 1) / f, (height + f - 1) / f, 8), saturating(width, 16, 1))
            case .png, .apng: return info.isProgressive ? adding(output, fullFrame) : output
            default:
                // A codec module's still: its colour stage's temporaries (a 10/12-bit AVIF or HEIF thumbnail keeps
                // a 16-bit copy of the image and averages it to a grid before converting).
                return isAnimation ? adding(output, saturating(fullFrame, 2, 1))
                    : adding(output, ImageDecoder.colorTemporaryByteCount(of: data, options: options))
            }
        }
        let frames = options.firstFrameOnly ? 1 : info.frameCount
        guard (try? limits.check(width: width, height: height, frameCount: frames)) != nil else { return 0 }
        // A deep source converted at 16 bits holds a 16-bit temporary beside its bitmap.
        guard isAnimation else { return adding(fullFrame, ImageDecoder.colorTemporaryByteCount(of: data, options: options)) }
        let working = saturating(fullFrame, 3, 1)
        guard !options.firstFrameOnly else { return working }
        return options.preloadAllFrames ? adding(saturating(fullFrame, info.frameCount, 1), working) : working
    }

    private static func adding(_ values: Int...) -> Int {
        var total = 0
        for value in values {
            let (sum, overflow) = total.addingReportingOverflow(value)
            if overflow { return .max }
            total = sum
        }
        return total
    }

    private static func saturating(_ a: Int, _ b: Int, _ c: Int) -> Int {
        let (ab, o1) = a.multipliedReportingOverflow(by: b)
        let (abc, o2) = ab.multipliedReportingOverflow(by: c)
        return o1 || o2 ? .max : abc
    }
}
