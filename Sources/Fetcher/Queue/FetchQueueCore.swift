import Foundation

/// The scheduling state of one `FetchQueue`: pending and running tasks, coalescing, limits.
///
/// Confined to the queue's network thread (reached through `ThreadBound`). Not Sendable.
final class FetchQueueCore {
    let thread: NetworkThread
    let failedURLs: FailedURLList
    let coalesces: Bool
    var maxConcurrent: Int
    var isLIFO: Bool
    var isSuspended = false
    /// The version of the last `FetchQueue` settings snapshot applied (older ones arriving late are skipped).
    var settingsVersion = 0
    private var isStopped = false
    private var pending = PendingTasks()
    private var running: [ObjectIdentifier: FetchTask] = [:]
    private var inFlight: [CoalescingKey: FetchTask] = [:]
    private var taskOfOperation: [ObjectIdentifier: FetchTask] = [:]
    private var sequence = 0
    /// `schedule` is on the stack: a nested call (a transfer that failed synchronously completes, which
    /// schedules again) returns at once and the outer loop picks the next task — no recursion, however many
    /// queued requests fail in a row.
    private var isScheduling = false
    /// Makes the transfer of a task (`Transfer.make`); tests replace it to make every start fail synchronously.
    var makeTransfer: (FetchRequest, NetworkThread, UnsafeMutableRawPointer?) -> Result<Transfer, FetchError> = Transfer.make

    init(thread: NetworkThread, failedURLs: FailedURLList, coalesces: Bool, maxConcurrent: Int, isLIFO: Bool) {
        self.thread = thread
        self.failedURLs = failedURLs
        self.coalesces = coalesces
        self.maxConcurrent = maxConcurrent
        self.isLIFO = isLIFO
    }

    deinit {
        // Forget this core's stop handler, or the loop keeps one per queue ever created. The key cannot be
        // reused by a newer core before this runs: that core's registration is submitted after this one.
        let key = ObjectIdentifier(self)
        thread.submit { loop in loop.removeStopHandler(key) }
    }

    /// Queues `operation`, joining an identical task in flight when coalescing.
    func add(_ operation: FetchOperation, loop: NetworkLoop) {
        let request = operation.request
        if isStopped || loop.isStopping { return operation.finish(.failure(.networkThreadStopped)) }
        if operation.isCancelled { return operation.finish(.failure(.cancelled)) }
        if request.usesFailedURLList && failedURLs.contains(request.url) {
            return operation.finish(.failure(.inFailedURLList(request.url)))
        }
        let key = CoalescingKey(request)
        if coalesces, let task = inFlight[key] {
            let oldPriority = task.priority
            task.add(operation)
            taskOfOperation[ObjectIdentifier(operation)] = task
            if task.phase == .pending && task.priority != oldPriority { pending.repush(task) }
            return
        }
        sequence += 1
        let task = FetchTask(request: request, key: key, sequence: sequence)
        task.priority = operation.priority
        task.add(operation)
        taskOfOperation[ObjectIdentifier(operation)] = task
        if coalesces { inFlight[key] = task }
        pending.push(task)
        schedule(loop: loop)
    }

    /// Completes `operation` with `.cancelled`; stops its task when it was the last caller.
    func cancel(_ operation: FetchOperation, loop: NetworkLoop) {
        defer { operation.finish(.failure(.cancelled)) }
        guard let task = taskOfOperation.removeValue(forKey: ObjectIdentifier(operation)) else { return }
        guard task.remove(operation) else {
            updatePriority(of: task) // the callers left may all ask for less
            return
        }
        abandon(task, loop: loop)
        schedule(loop: loop)
    }

    /// A caller's priority changed: a queued task moves to the highest priority of its callers.
    func reprioritize(_ operation: FetchOperation, loop: NetworkLoop) {
        guard let task = taskOfOperation[ObjectIdentifier(operation)] else { return }
        updatePriority(of: task)
    }

    private func updatePriority(of task: FetchTask) {
        guard task.phase == .pending, let highest = task.subscribers.map(\.priority).max(),
              highest != task.priority else { return }
        task.priority = highest
        pending.repush(task)
    }

    /// Entries in the pending heap, live or stale (for tests: stale ones must not pile up).
    var pendingEntryCount: Int { pending.entryCount }

    /// Cancels every operation of this queue.
    func cancelAll(loop: NetworkLoop) {
        endAll(.cancelled, loop: loop)
    }

    /// The thread is stopping: every operation fails with `.networkThreadStopped`.
    func stop(loop: NetworkLoop) {
        isStopped = true
        endAll(.networkThreadStopped, loop: loop)
    }

    private func endAll(_ error: FetchError, loop: NetworkLoop) {
        let tasks = Set(taskOfOperation.values.map { TaskBox($0) })
        taskOfOperation.removeAll()
        pending.removeAll()
        for box in tasks {
            abandon(box.task, loop: loop)
            box.task.finishAll(.failure(error))
        }
    }

    /// Starts pending tasks while slots are free.
    func schedule(loop: NetworkLoop) {
        guard !isScheduling else { return }
        isScheduling = true
        defer { isScheduling = false }
        while !isSuspended && !isStopped && running.count < maxConcurrent, let task = pending.pop(lifo: isLIFO) {
            start(task, loop: loop)
        }
    }

    /// Forgets a task without completing its callers (they are completed by the caller of this method).
    private func abandon(_ task: FetchTask, loop: NetworkLoop) {
        if task.phase == .pending { pending.noteStale() } // its heap entry is dropped lazily, or by compaction
        if let transfer = task.transfer { loop.detach(transfer) } // stops it and frees the handle
        running.removeValue(forKey: ObjectIdentifier(task))
        if inFlight[task.key] === task { inFlight.removeValue(forKey: task.key) }
        task.phase = .done
        task.transfer = nil
    }

    private func start(_ task: FetchTask, loop: NetworkLoop) {
        task.onComplete = { [unowned self] task, result in self.complete(task, result, loop: loop) }
        switch makeTransfer(task.request, thread, loop.multi?.share) {
        case .failure(let error):
            complete(task, .failure(error), loop: loop)
        case .success(let transfer):
            task.didStart(transfer)
            running[ObjectIdentifier(task)] = task
            if !loop.attach(transfer) { transfer.fail(.networkThreadStopped) }
        }
    }

    private func complete(_ task: FetchTask, _ result: Result<FetchResult, FetchError>, loop: NetworkLoop) {
        guard task.phase != .done else { return }
        running.removeValue(forKey: ObjectIdentifier(task))
        if inFlight[task.key] === task { inFlight.removeValue(forKey: task.key) }
        for operation in task.subscribers { taskOfOperation.removeValue(forKey: ObjectIdentifier(operation)) }
        if case .failure(let error) = result, task.subscribers.contains(where: \.request.usesFailedURLList) {
            failedURLs.record(error, for: task.request.url)
        }
        task.finishAll(result)
        schedule(loop: loop)
    }
}

/// Hashable identity of a task, to collect each task once.
private struct TaskBox: Hashable {
    let task: FetchTask
    init(_ task: FetchTask) { self.task = task }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.task === rhs.task }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(task)) }
}

@available(*, unavailable)
extension FetchQueueCore: Sendable {}
