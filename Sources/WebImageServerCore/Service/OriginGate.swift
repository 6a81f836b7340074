import Foundation
import WebImageSync

/// The admission of origin transfers: at most `totalLimit` at once, at most `perHostLimit` of them to one host,
/// waiting requests served oldest first among those whose host is under its cap, each waiting no later than its
/// deadline, and at most `perHostQueueLimit` of them waiting for one host.
///
/// The manager's `FetchQueue` alone was one FIFO of 16 transfers with no deadline while queued: 16 requests to an
/// origin that accepts and never answers held every slot for a whole timeout, and 64 made every uncached request of
/// every source wait (then 503) for about 40 s. Here one host holds at most its share of the slots, a request that
/// waited until its deadline is answered without starting, and `closeAndCancelAll()` ends every wait and transfer at
/// once (the shutdown's grace).
///
/// - Important: Thread-safe. Continuations are resumed outside the lock, each exactly once (whoever removes a
///   waiter from the list resumes it).
final class OriginGate: Sendable {
    /// Why a wait or a transfer ended without its result.
    enum Refusal: Error, Equatable {
        /// The request's deadline passed while it waited for a slot; `blockedByHost` when it queued because its own
        /// host was at its cap (the origin is slow), false when every slot was busy with other hosts (the server is).
        case queueDeadline(blockedByHost: Bool)
        /// The request's deadline passed during its transfer, which was cancelled.
        case transferDeadline
        /// Too many requests already wait for this host.
        case hostQueueFull
        /// The gate was closed (shutdown): nothing more starts, every wait and transfer was cancelled.
        case closed
    }

    /// What the gate holds now.
    struct Snapshot: Sendable, Equatable {
        var active: Int
        var waiting: Int
        var totalLimit: Int
    }

    private struct Waiter {
        let id: UInt64
        let host: String
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var active = 0
        var activeByHost: [String: Int] = [:]
        var waiters: [Waiter] = []
        var waitingByHost: [String: Int] = [:]
        var nextID: UInt64 = 0
        var isClosed = false
        /// The transfers running now, cancelled by `closeAndCancelAll()`.
        var transfers: [UInt64: @Sendable () -> Void] = [:]
    }

    let totalLimit: Int
    let perHostLimit: Int
    let perHostQueueLimit: Int
    /// The least time left before its deadline for a transfer to start: a request granted a slot with less (it
    /// waited nearly its whole timeout) is answered as one that waited past it, not started for a few
    /// milliseconds against an origin.
    let minimumTransferTime: Duration
    private let state = Mutex(State())

    init(totalLimit: Int, perHostLimit: Int, perHostQueueLimit: Int, minimumTransferTime: Duration = .zero) {
        self.minimumTransferTime = minimumTransferTime
        self.totalLimit = max(1, totalLimit)
        self.perHostLimit = max(1, min(perHostLimit, self.totalLimit))
        self.perHostQueueLimit = max(0, perHostQueueLimit)
    }

    var snapshot: Snapshot {
        state.withLock { Snapshot(active: $0.active, waiting: $0.waiters.count, totalLimit: totalLimit) }
    }

    /// Runs `body` (one transfer to `host`) once a slot is free, and ends it at `deadline`.
    ///
    /// - Throws: `Refusal` (deadline, full host queue, closed), `CancellationError` when the calling task is
    ///   cancelled, or what `body` throws.
    func run<T: Sendable>(host: String, deadline: ContinuousClock.Instant,
                          _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let isBehindHost = try await acquire(host: host, deadline: deadline)
        defer { release(host: host) }
        guard deadline - ContinuousClock.now > minimumTransferTime else {
            throw Refusal.queueDeadline(blockedByHost: isBehindHost)
        }
        // The transfer runs in its own task so that the deadline and the shutdown can cancel it (the calling task
        // may be a coalesced one nobody cancels); cancelling it cancels the fetch (`FetchQueue.fetch` async).
        let task = Task { try await body() }
        let reason = Mutex<Refusal?>(nil)
        let id: UInt64? = state.withLock { state -> UInt64? in
            guard !state.isClosed else { return nil }
            state.nextID += 1
            state.transfers[state.nextID] = { reason.withLock { $0 = $0 ?? .closed }; task.cancel() }
            return state.nextID
        }
        guard let id else {
            task.cancel()
            throw Refusal.closed
        }
        let timer = Task {
            try await Task.sleep(until: deadline, clock: .continuous)
            reason.withLock { $0 = $0 ?? .transferDeadline }
            task.cancel()
        }
        defer {
            timer.cancel()
            _ = state.withLock { $0.transfers.removeValue(forKey: id) }
        }
        do {
            return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        } catch {
            if let why = reason.withLock({ $0 }) { throw why }
            throw error
        }
    }

    /// Closes the gate: waiters are answered `.closed` at once, running transfers are cancelled, and nothing starts
    /// any more.
    func closeAndCancelAll() {
        let (waiters, transfers) = state.withLock { state -> ([Waiter], [@Sendable () -> Void]) in
            state.isClosed = true
            let waiters = state.waiters
            state.waiters.removeAll()
            state.waitingByHost.removeAll()
            return (waiters, Array(state.transfers.values))
        }
        for waiter in waiters { waiter.continuation.resume(throwing: Refusal.closed) }
        for cancel in transfers { cancel() }
    }

    // MARK: Slots

    /// Takes a slot for `host`, waiting for one until `deadline`; returns whether it waited behind its own host.
    private func acquire(host: String, deadline: ContinuousClock.Instant) async throws -> Bool {
        let id = state.withLock { state -> UInt64 in state.nextID += 1; return state.nextID }
        let timer = Mutex<Task<Void, Never>?>(nil)
        let isBehindHost = Mutex(false)
        defer { timer.withLock { $0 }?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Admission { case granted, queued(behindHost: Bool), refused(any Error) }
                let admission = state.withLock { state -> Admission in
                    if state.isClosed { return .refused(Refusal.closed) }
                    if Task.isCancelled { return .refused(CancellationError()) }
                    if state.active < totalLimit, state.activeByHost[host, default: 0] < perHostLimit {
                        state.active += 1
                        state.activeByHost[host, default: 0] += 1
                        return .granted
                    }
                    guard state.waitingByHost[host, default: 0] < perHostQueueLimit else {
                        return .refused(Refusal.hostQueueFull)
                    }
                    state.waiters.append(Waiter(id: id, host: host, continuation: continuation))
                    state.waitingByHost[host, default: 0] += 1
                    return .queued(behindHost: state.activeByHost[host, default: 0] >= perHostLimit)
                }
                switch admission {
                case .granted: continuation.resume()
                case .refused(let error): continuation.resume(throwing: error)
                case .queued(let behind):
                    isBehindHost.withLock { $0 = behind }
                    timer.withLock {
                        $0 = Task { [self] in
                            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                            remove(id, throwing: Refusal.queueDeadline(blockedByHost: behind))
                        }
                    }
                }
            }
        } onCancel: {
            remove(id, throwing: CancellationError())
        }
        return isBehindHost.withLock { $0 }
    }

    /// Takes waiter `id` off the list, if still there, and resumes it with `error`.
    private func remove(_ id: UInt64, throwing error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = state.waiters.remove(at: index)
            Self._decrement(&state.waitingByHost, waiter.host)
            return waiter
        }
        waiter?.continuation.resume(throwing: error)
    }

    private func release(host: String) {
        let granted = state.withLock { state -> Waiter? in
            state.active -= 1
            Self._decrement(&state.activeByHost, host)
            // The oldest waiter whose host is under its cap takes the freed slot.
            guard !state.isClosed,
                  let index = state.waiters.firstIndex(where: { state.activeByHost[$0.host, default: 0] < perHostLimit })
            else { return nil }
            let waiter = state.waiters.remove(at: index)
            Self._decrement(&state.waitingByHost, waiter.host)
            state.active += 1
            state.activeByHost[waiter.host, default: 0] += 1
            return waiter
        }
        granted?.continuation.resume()
    }

    private static func _decrement(_ counts: inout [String: Int], _ host: String) {
        let count = counts[host, default: 0] - 1
        counts[host] = count > 0 ? count : nil
    }
}
