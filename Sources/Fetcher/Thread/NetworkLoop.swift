import Foundation

/// The state confined to one network thread and its run loop: the multi handle, the transfers it drives, and
/// the hooks that must run when the thread stops.
///
/// Confined to the network thread (it is created there and passed only to work submitted with
/// `NetworkThread.submit`). Not Sendable.
final class NetworkLoop {
    let thread: NetworkThread
    /// Nil only if libcurl could not allocate a multi handle; every transfer then fails.
    private(set) var multi: CurlMultiHandle?
    /// Transfers added to the multi handle, by their easy handle's address (also their `CURLOPT_PRIVATE`).
    private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
    /// Transfers of `file` URLs, read by `readFiles()` a chunk per turn of the loop (never by libcurl).
    private var fileTransfers: [ObjectIdentifier: Transfer] = [:]
    /// Called once when the thread stops, before remaining transfers are ended (queues fail what they hold).
    private var stopHandlers: [ObjectIdentifier: () -> Void] = [:]
    /// Set when a transfer is attached; the run loop then performs again before polling.
    private var hasNewTransfers = false

    init(thread: NetworkThread) {
        self.thread = thread
    }

    /// The thread body: run submitted work, drive transfers, sleep in `curl_multi_poll`, until stopped.
    func run() {
        multi = CurlMultiHandle(owner: thread)
        thread.shared.withLock { state in state.multi = multi.map(WakeHandle.init) }
        while true {
            let stopRequested = runPendingWork()
            if stopRequested { break }
            guard let multi else {
                // libcurl could not make a multi handle: every transfer fails at once; just serve `perform`.
                if !readFiles() { usleep(10_000) }
                continue
            }
            // Completions start queued transfers: drive those at once instead of waiting for the next poll.
            repeat {
                hasNewTransfers = false
                multi.perform()
                while let (easy, code) = multi.nextCompleted() {
                    guard let transfer = transfers[easy] else { continue }
                    detach(transfer)
                    switch transfer.followRedirect(afterCompletionWith: code) {
                    case .complete: transfer.complete(with: code)
                    case .fail(let error): transfer.fail(error)
                    case .follow: if !attach(transfer) { transfer.fail(.networkThreadStopped) }
                    }
                }
            } while hasNewTransfers
            // Files are read a chunk per turn, between the submitted work (cancellations) and the sockets.
            let filesMoved = readFiles()
            multi.poll(timeoutMilliseconds: filesMoved ? 0 : fileTransfers.isEmpty ? 1_000 : 10)
        }
        shutDown()
    }

    /// Reads one chunk of each `file` transfer, completing those that end. Returns whether any read made
    /// progress (then the loop turns again at once; otherwise it polls with a short timeout).
    private func readFiles() -> Bool {
        var madeProgress = false
        for transfer in Array(fileTransfers.values) {
            guard let result = transfer.readFileChunk(madeProgress: &madeProgress) else { continue }
            detach(transfer)
            transfer.finish(result)
        }
        return madeProgress
    }

    /// Runs the work submitted since the last call; returns whether a stop was requested.
    private func runPendingWork() -> Bool {
        let (work, stopRequested) = thread.shared.withLock { state in
            let work = state.pending
            state.pending.removeAll()
            return (work, state.isStopRequested)
        }
        for item in work { item(self) }
        return stopRequested
    }

    private func shutDown() {
        for handler in stopHandlers.values { handler() }
        stopHandlers.removeAll()
        for transfer in Array(transfers.values) + Array(fileTransfers.values) {
            detach(transfer)
            transfer.fail(.networkThreadStopped)
        }
        // Close the door, then run what slipped in (it sees the stop and fails its operations).
        var lastWork: [@Sendable (NetworkLoop) -> Void] = []
        repeat {
            lastWork = thread.shared.withLock { state in
                let work = state.pending
                state.pending.removeAll()
                state.isClosed = true
                if work.isEmpty { state.multi = nil } // no wake-up may touch the handle past this point
                return work
            }
            for item in lastWork { item(self) }
        } while !lastWork.isEmpty
        precondition(transfers.isEmpty && fileTransfers.isEmpty, "a transfer was added after the network thread stopped")
        multi = nil // curl_multi_cleanup closes the cached connections
    }

    /// Whether the loop is stopping (transfers added now fail at once).
    var isStopping: Bool { thread.shared.withLock { $0.isStopRequested } }

    /// Adds `transfer` to the multi handle; false (nothing added) when the thread is stopping or libcurl
    /// refuses it.
    func attach(_ transfer: Transfer) -> Bool {
        guard !isStopping else { return false }
        if transfer.file != nil {
            fileTransfers[ObjectIdentifier(transfer)] = transfer
        } else {
            guard let multi, multi.add(transfer.easy) else { return false }
            transfers[transfer.easy.raw] = transfer
        }
        hasNewTransfers = true
        thread.activity.change(by: 1)
        return true
    }

    /// Removes `transfer` from the multi handle (it stops at once); its handle is freed with it.
    func detach(_ transfer: Transfer) {
        if transfer.file != nil {
            guard fileTransfers.removeValue(forKey: ObjectIdentifier(transfer)) != nil else { return }
        } else {
            guard transfers.removeValue(forKey: transfer.easy.raw) != nil else { return }
            multi?.remove(transfer.easy)
        }
        thread.activity.change(by: -1)
    }

    /// Registers `handler` to run on the thread when it stops; replaces any handler under the same key (a
    /// queue's key is its core's identity, reused only after that core is gone).
    func onStop(_ key: ObjectIdentifier, _ handler: @escaping () -> Void) {
        stopHandlers[key] = handler
    }

    /// Forgets the handler under `key` (its queue is gone).
    func removeStopHandler(_ key: ObjectIdentifier) {
        stopHandlers.removeValue(forKey: key)
    }

    /// Stop handlers registered now (for tests: one per live queue, not one per queue ever made).
    var stopHandlerCount: Int { stopHandlers.count }
}

@available(*, unavailable)
extension NetworkLoop: Sendable {}
