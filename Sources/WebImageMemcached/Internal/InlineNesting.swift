#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Bounds the stack used by completions that call a tier again on the thread that runs them inline.
///
/// An operation that finds a handle free runs on the calling thread and its completion runs there, before the
/// call returns. A completion that calls the tier again (a caller walking a list, each completion asking for the
/// next key) would nest one round trip's frames per step, without end. `run` counts the nesting per thread:
/// up to `limit` nested operations run inline as before; a deeper one is put on this thread's trampoline and run
/// right after the outermost operation's completion returns, still on this thread and before the outermost call
/// returns. So a chain of any length uses at most `limit` levels of stack, and never changes thread.
///
/// - Important: Per thread: the state is a thread-local, touched only by the thread it belongs to.
enum InlineNesting {
    /// Operations nested inline on one thread beyond which the next one waits for the outermost to finish.
    static let limit = 8

    /// This thread's nesting: made by the outermost `run`, freed when it returns.
    private final class Frame {
        var depth = 0
        var pending: [() -> Void] = []
    }

    /// The thread-local slot of the current thread's `Frame` (an unretained pointer; the outermost `run` owns it);
    /// `nil` when the process is out of thread-local keys (EAGAIN, ENOMEM: logged once; calls then nest as
    /// they did before this bound).
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        guard status == 0 else {
            memcachedLog.error("pthread_key_create failed: completions calling the tier again nest without a bound",
                               metadata: ["errno": "\(status)"])
            return nil
        }
        return key
    }()

    /// Runs `body` now, or — when `limit` operations are already nested on this thread — after the outermost
    /// one's `body` returns, on this thread, before the outermost `run` returns.
    static func run(_ body: @escaping () -> Void) {
        guard let key else { return body() }
        if let raw = pthread_getspecific(key) {
            let frame = Unmanaged<Frame>.fromOpaque(raw).takeUnretainedValue()
            guard frame.depth < limit else { return frame.pending.append(body) }
            frame.depth += 1
            defer { frame.depth -= 1 }
            return body()
        }
        let frame = Frame()
        pthread_setspecific(key, Unmanaged.passUnretained(frame).toOpaque())
        defer { pthread_setspecific(key, nil) }
        withExtendedLifetime(frame) {
            frame.depth = 1
            body()
            // In order; what these add runs after them.
            while !frame.pending.isEmpty {
                let batch = frame.pending
                frame.pending = []
                for next in batch { next() }
            }
        }
    }
}
