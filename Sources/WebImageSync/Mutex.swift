internal import CWebImageSync
import Synchronization

/// `Synchronization.Mutex`, made visible to ThreadSanitizer.
///
/// On Linux the standard library's `Mutex` locks with raw futex syscalls that ThreadSanitizer does not
/// intercept, so TSan reports every access made under it as a data race. This wrapper keeps the standard
/// `Mutex` (same API, same performance class) and adds `__tsan_acquire` / `__tsan_release` annotations, which
/// compile to empty C calls outside TSan builds. Each WebImage module shadows the standard name with
/// `typealias Mutex = WebImageSync.Mutex` (in its `Internal/Mutex.swift`), so code reads as ordinary `Mutex`.
///
/// - Important: Thread-safe, like `Synchronization.Mutex`.
public struct Mutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: `Synchronization.Mutex` is Sendable; `token` is an immutable, empty, Sendable object whose
    // address names this lock for TSan.
    private let base: Synchronization.Mutex<Value>
    private let token = Token()

    private final class Token: Sendable {}

    /// Makes a mutex guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        base = Synchronization.Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try _withLock(body)
    }

    /// Runs `body` with exclusive access if the lock is free now; returns `nil` without waiting otherwise.
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        let address = Unmanaged.passUnretained(token).toOpaque()
        return try base.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            wi_tsan_acquire(address)
            defer { wi_tsan_release(address) }
            return try body(&value)
        }
    }

    @usableFromInline
    borrowing func _withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = Unmanaged.passUnretained(token).toOpaque()
        return try base.withLock { (value: inout sending Value) throws(E) -> sending Result in
            wi_tsan_acquire(address)
            defer { wi_tsan_release(address) }
            return try body(&value)
        }
    }
}
