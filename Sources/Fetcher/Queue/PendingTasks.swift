/// Queued tasks by priority; FIFO or LIFO within a priority. Removal is lazy: a task is skipped when popped if
/// it is no longer pending or now sits in another bucket (its priority changed when a caller joined or left).
/// Stale entries are also swept out once they outnumber the live ones, so a suspended queue whose requests
/// are cancelled does not keep them (and their requests) forever.
///
/// Not thread-safe; owned by `FetchQueueCore`.
struct PendingTasks {
    private var buckets = [[FetchTask]](repeating: [], count: FetchPriority.allCases.count)
    private var heads = [Int](repeating: 0, count: FetchPriority.allCases.count)
    /// Entries known to be stale (cancelled while pending, or left behind by a priority change).
    private var staleCount = 0

    mutating func push(_ task: FetchTask) {
        buckets[task.priority.rawValue].append(task)
    }

    /// Pushes `task` again after its priority changed; its old entry becomes stale.
    mutating func repush(_ task: FetchTask) {
        push(task)
        noteStale()
    }

    /// One entry became stale; sweeps when stale entries are more than half of all.
    mutating func noteStale() {
        staleCount += 1
        guard staleCount > 64, staleCount * 2 > entryCount else { return }
        for index in buckets.indices {
            let level = FetchPriority.allCases[index]
            var seen = Set<ObjectIdentifier>()
            // Keep each live task once, at its first place (a task pushed twice into one bucket keeps its oldest
            // place: the LIFO/FIFO order among the others is unchanged).
            buckets[index] = buckets[index][heads[index]...].filter { task in
                task.phase == .pending && task.priority == level && seen.insert(ObjectIdentifier(task)).inserted
            }
            heads[index] = 0
        }
        staleCount = 0
    }

    /// Entries held, live or stale.
    var entryCount: Int { zip(buckets, heads).reduce(0) { $0 + $1.0.count - $1.1 } }

    /// The next pending task: highest priority first, then oldest (FIFO) or newest (LIFO).
    mutating func pop(lifo: Bool) -> FetchTask? {
        for level in FetchPriority.allCases.reversed() {
            let index = level.rawValue
            while heads[index] < buckets[index].count {
                let task: FetchTask
                if lifo {
                    task = buckets[index].removeLast()
                } else {
                    task = buckets[index][heads[index]]
                    heads[index] += 1
                    compact(index)
                }
                if task.phase == .pending && task.priority == level { return task }
                staleCount = max(0, staleCount - 1)
            }
            buckets[index].removeAll(keepingCapacity: true)
            heads[index] = 0
        }
        return nil
    }

    mutating func removeAll() {
        staleCount = 0
        for index in buckets.indices {
            buckets[index].removeAll()
            heads[index] = 0
        }
    }

    private mutating func compact(_ index: Int) {
        if heads[index] > 1_024 && heads[index] * 2 > buckets[index].count {
            buckets[index].removeFirst(heads[index])
            heads[index] = 0
        }
    }
}
