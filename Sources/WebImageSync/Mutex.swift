import CWebImageSync
import Synchronization

/// `Synchronization.Mutex`, made visible to ThreadSanitizer.
///
/// On Linux the standard library's `Mutex` locks with raw futex syscalls that ThreadSanitizer does not
/// intercept, so TSan reports every access made under it as a data race. This wrapper keeps the standard
/// `Mutex` (same API, fully inlinable, no overhead in normal builds) and, in builds compiled with
/// `-DWEBIMAGE_TSAN` (what `make test-stress` passes along with `--sanitize=thread`), tells TSan about each
/// acquire and release. Each WebImage module shadows the standard name with
/// `typealias Mutex = WebImageSync.Mutex` (in its `Internal/Mutex.swift`), so code reads as ordinary `Mutex`.
///
/// - Important: Thread-safe, like `Synchronization.Mutex`. Run ThreadSanitizer with `-Xswiftc -DWEBIMAGE_TSAN`,
///   or it reports false races under this lock.
public struct Mutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: `Synchronization.Mutex` is Sendable; `token` is an immutable, empty, Sendable object whose
    // address names this lock for TSan.
    @usableFromInline let base: Synchronization.Mutex<Value>
    @usableFromInline let token = Token()

    /// Names one lock for ThreadSanitizer.
    @usableFromInline final class Token: Sendable {
        @usableFromInline init() {}
    }

    /// Makes a mutex guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        base = Synchronization.Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if WEBIMAGE_TSAN
        let address = Unmanaged.passUnretained(token).toOpaque()
        return try base.withLock { (value: inout sending Value) throws(E) -> sending Result in
            wi_tsan_acquire(address)
            defer { wi_tsan_release(address) }
            return try body(&value)
        }
        #else
        return try base.withLock(body)
        #endif
    }

    /// Runs `body` with exclusive access if the lock is free now; returns `nil` without waiting otherwise.
    @inlinable
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        #if WEBIMAGE_TSAN
        let address = Unmanaged.passUnretained(token).toOpaque()
        return try base.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            wi_tsan_acquire(address)
            defer { wi_tsan_release(address) }
            return try body(&value)
        }
        #else
        return try base.withLockIfAvailable(body)
        #endif
    }
}
