/// Queued tasks by priority; FIFO or LIFO within a priority. Removal is lazy: a task is skipped when popped if
/// it is no longer pending or now sits in a higher bucket (its priority rose when a caller joined).
///
/// Not thread-safe; owned by `FetchQueueCore`.
struct PendingTasks {
    private var buckets = [[FetchTask]](repeating: [], count: FetchPriority.allCases.count)
    private var heads = [Int](repeating: 0, count: FetchPriority.allCases.count)

    mutating func push(_ task: FetchTask) {
        buckets[task.priority.rawValue].append(task)
    }

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
            }
            buckets[index].removeAll(keepingCapacity: true)
            heads[index] = 0
        }
        return nil
    }

    mutating func removeAll() {
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
