import Foundation
import Synchronization

/// The network thread: one long-lived `Thread` (named `webimage.network`) running a libcurl multi loop
/// (`curl_multi_poll`, woken by `curl_multi_wakeup` when work is queued). Every curl handle is created, used
/// and freed on it.
///
///     NetworkThread.shared.perform { /* runs on the network thread */ }
///
/// Tests create their own, then `stop()` and `join()` it:
///
///     let thread = NetworkThread()
///     let queue = FetchQueue(thread: thread)
///     …
///     thread.stop(); thread.join()
///
/// Stopping ends every transfer still running on the thread (its operations complete with
/// `FetchError.networkThreadStopped`), frees every handle and closes every connection.
///
/// - Important: Thread-safe. `perform` may be called from any thread, including the network thread itself.
public final class NetworkThread: Sendable {
    /// The process-wide network thread, started on first use; it is never stopped.
    public static let shared = NetworkThread()

    /// Transfers in flight on this thread, observable by the app.
    public let activity = NetworkActivityCounter()

    /// The thread's name (`webimage.network` by default).
    public let name: String

    struct Shared {
        var pending: [@Sendable (NetworkLoop) -> Void] = []
        var isStopRequested = false
        var isClosed = false
        /// The multi handle, while the loop runs: `curl_multi_wakeup` is called under the lock.
        var multi: WakeHandle?
    }

    let shared = Mutex(Shared())
    private let threadID = Atomic<UInt>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let hasJoined = Atomic<Bool>(false)

    /// Starts a new network thread named `name`. Cheap: the multi handle is made on the new thread.
    public init(name: String = "webimage.network") {
        self.name = name
        let thread = Thread { [self] in
            // The kernel keeps 15 bytes of a thread name (a longer one is refused): `top` shows `webimage.networ`.
            Thread.current.name = String(decoding: self.name.utf8.prefix(15), as: UTF8.self)
            self.threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
            NetworkLoop(thread: self).run()
            self.finished.signal()
        }
        thread.start()
    }

    /// Runs `work` on the network thread, soon, in submission order.
    ///
    /// - Returns: false when the thread has stopped; `work` then never runs.
    @discardableResult
    public func perform(_ work: @escaping @Sendable () -> Void) -> Bool {
        submit { _ in work() }
    }

    /// Asks the loop to stop: transfers still running end with `networkThreadStopped`, handles are freed,
    /// and the thread exits. Returns at once; `join()` waits. Idempotent. Never stop `shared`: it cannot be
    /// restarted.
    public func stop() {
        shared.withLock {
            $0.isStopRequested = true
            $0.multi?.wakeUp()
        }
    }

    /// Waits until the thread has exited (after `stop()`). Must not be called on the network thread itself.
    /// Safe to call more than once.
    public func join() {
        precondition(!isCurrent, "join() on the network thread would deadlock")
        if hasJoined.load(ordering: .acquiring) { return }
        finished.wait()
        hasJoined.store(true, ordering: .releasing)
        finished.signal() // let other joiners through
    }

    /// Whether the caller is running on this network thread.
    public var isCurrent: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && id == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// Traps in debug builds when not on this thread: the guard of every curl handle.
    func assertOnThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(isCurrent, "curl handle used off its network thread", file: file, line: line)
    }

    /// Queues `work` with access to the loop's confined state; false when the thread has stopped.
    @discardableResult
    func submit(_ work: @escaping @Sendable (NetworkLoop) -> Void) -> Bool {
        shared.withLock {
            guard !$0.isClosed else { return false }
            $0.pending.append(work)
            if $0.pending.count == 1 { $0.multi?.wakeUp() }
            return true
        }
    }
}

/// The multi handle's wake-up entry, the one curl call allowed from any thread.
/// `@unchecked Sendable`: it only calls `curl_multi_wakeup`, which libcurl documents as thread-safe, and
/// `NetworkThread` clears it under its lock before the multi handle is freed.
struct WakeHandle: @unchecked Sendable {
    let multi: CurlMultiHandle
    func wakeUp() { multi.wakeUp() }
}
