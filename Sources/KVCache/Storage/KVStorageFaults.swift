import Synchronization

/// The fault-injection seam of `KVStorage`: every file write, read, fsync and rename, every SQLite open and
/// step, and every directory sync asks this object first, so a test can make the k-th one fail with a
/// chosen `errno` (e.g. `ENOSPC`) or SQLite result code (e.g. `SQLITE_PROTOCOL`).
///
/// ```swift
/// let faults = KVStorageFaults()
/// faults.fail(.rename, onCall: 3, errno: ENOSPC)
/// faults.fail(.sqliteOpen, onCall: 1, sqliteCode: 14, errno: EMFILE) // CANTOPEN, out of descriptors
/// let storage = try KVStorage(path: dir, type: .mixed, faults: faults)
/// ```
///
/// - Important: Thread-safe (a `Mutex`). Internal: tests reach it with `@testable import KVCache`.
final class KVStorageFaults: Sendable {
    /// A kind of I/O the storage performs.
    enum Operation: Hashable, Sendable {
        /// One `write(2)` of a value file.
        case fileWrite
        /// One `read(2)` of a value file.
        case fileRead
        /// One `fsync(2)` of a value file (only when `syncsFiles` is on).
        case fileSync
        /// One `fsync(2)` of the `data/` folder after a file was renamed into it (only when `syncsFiles` is on).
        case directorySync
        /// One `rename(2)`: temporary → data, or data → trash.
        case rename
        /// One `sqlite3_open_v2` of the manifest.
        case sqliteOpen
        /// One `sqlite3_step` of a statement, a `COMMIT`, or a statement run by `execute` (PRAGMAs, DDL).
        case sqliteStep
    }

    /// One planned failure: the `errno` a system call reports, and for SQLite operations the result code
    /// (`SQLITE_FULL` unless given).
    struct Failure: Sendable {
        var errno: Int32
        var sqliteCode: Int32
    }

    private struct Plan {
        var calls: [Operation: Int] = [:]
        var failures: [Operation: (call: Int, failure: Failure)] = [:]
        var log: [Operation]?
    }

    private let plan = Mutex(Plan())

    init() {}

    /// Makes the `call`-th (1-based, counted from now) operation of `kind` fail with `errno` (a SQLite
    /// operation fails with `SQLITE_FULL`).
    func fail(_ kind: Operation, onCall call: Int, errno: Int32) {
        fail(kind, onCall: call, failure: Failure(errno: errno, sqliteCode: 13))
    }

    /// Makes the `call`-th (1-based, counted from now) SQLite operation of `kind` fail with the (extended)
    /// result code `sqliteCode`, as if the system call under it had failed with `errno`.
    func fail(_ kind: Operation, onCall call: Int, sqliteCode: Int32, errno: Int32 = 0) {
        fail(kind, onCall: call, failure: Failure(errno: errno, sqliteCode: sqliteCode))
    }

    private func fail(_ kind: Operation, onCall call: Int, failure: Failure) {
        plan.withLock {
            $0.calls[kind] = 0
            $0.failures[kind] = (call, failure)
        }
    }

    /// Cancels every planned failure that has not fired (counts are kept).
    func disarm() { plan.withLock { $0.failures.removeAll() } }

    /// How many operations of `kind` ran since the last `fail` of that kind (or since creation).
    func count(of kind: Operation) -> Int { plan.withLock { $0.calls[kind] ?? 0 } }

    /// Starts (or restarts) recording the order of the operations (`recorded`).
    func startRecording() { plan.withLock { $0.log = [] } }

    /// The operations since `startRecording()`, in order.
    var recorded: [Operation] { plan.withLock { $0.log ?? [] } }

    /// Counts one operation of `kind`; returns the `errno` to fail it with, or `nil` to let it run.
    func check(_ kind: Operation) -> Int32? { checkFailure(kind)?.errno }

    /// Counts one SQLite operation of `kind`; returns the failure to report, or `nil` to let it run.
    func checkFailure(_ kind: Operation) -> Failure? {
        plan.withLock { plan in
            let call = (plan.calls[kind] ?? 0) + 1
            plan.calls[kind] = call
            plan.log?.append(kind)
            guard let planned = plan.failures[kind], planned.call == call else { return nil }
            plan.failures[kind] = nil
            return planned.failure
        }
    }
}
