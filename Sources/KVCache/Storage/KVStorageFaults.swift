import Synchronization

/// The fault-injection seam of `KVStorage`: every file write, fsync and rename, and every SQLite step,
/// asks this object first, so a test can make the k-th one fail with a chosen `errno` (e.g. `ENOSPC`).
///
/// ```swift
/// let faults = KVStorageFaults()
/// faults.fail(.rename, onCall: 3, errno: ENOSPC)
/// let storage = try KVStorage(path: dir, type: .mixed, faults: faults)
/// ```
///
/// - Important: Thread-safe (a `Mutex`). Internal: tests reach it with `@testable import KVCache`.
final class KVStorageFaults: Sendable {
    /// A kind of I/O the storage performs.
    enum Operation: Hashable, Sendable {
        /// One `write(2)` of a value file.
        case fileWrite
        /// One `fsync(2)` of a value file (only when `syncsFiles` is on).
        case fileSync
        /// One `rename(2)`: temporary → data, or data → trash.
        case rename
        /// One `sqlite3_step` of a statement, or a `COMMIT`.
        case sqliteStep
    }

    private struct Plan {
        var calls: [Operation: Int] = [:]
        var failures: [Operation: (call: Int, errno: Int32)] = [:]
    }

    private let plan = Mutex(Plan())

    init() {}

    /// Makes the `call`-th (1-based, counted from now) operation of `kind` fail with `errno`.
    func fail(_ kind: Operation, onCall call: Int, errno: Int32) {
        plan.withLock {
            $0.calls[kind] = 0
            $0.failures[kind] = (call, errno)
        }
    }

    /// Cancels every planned failure that has not fired (counts are kept).
    func disarm() { plan.withLock { $0.failures.removeAll() } }

    /// How many operations of `kind` ran since the last `fail(_:onCall:errno:)` of that kind (or since creation).
    func count(of kind: Operation) -> Int { plan.withLock { $0.calls[kind] ?? 0 } }

    /// Counts one operation of `kind`; returns the `errno` to fail it with, or `nil` to let it run.
    func check(_ kind: Operation) -> Int32? {
        plan.withLock { plan in
            let call = (plan.calls[kind] ?? 0) + 1
            plan.calls[kind] = call
            guard let failure = plan.failures[kind], failure.call == call else { return nil }
            plan.failures[kind] = nil
            return failure.errno
        }
    }
}
