import Dispatch

/// One breaker per server of a pool: closed (requests go through) until the server times out or refuses,
/// then open (its keys are misses at once, nothing is sent) for `openNanoseconds`, then half-open: exactly one
/// request probes it — success closes the breaker, failure opens it for another window. So a dead or hung
/// server costs at most one timeout per window, whatever the request rate.
///
/// - Important: Thread-safe (one `Mutex`); shared by every handle of a tier.
final class CircuitBreaker: Sendable {
    /// The state of one server's breaker, for `MemcachedTier.serverStates`.
    struct Entry: Sendable {
        var isOpen = false
        var isProbing = false
        var openUntil: UInt64 = 0
        var openings = 0
        var failures = 0
    }

    private let entries: Mutex<[Entry]>
    private let openNanoseconds: UInt64

    init(servers: Int, openMilliseconds: Int) {
        entries = Mutex(Array(repeating: Entry(), count: servers))
        openNanoseconds = UInt64(openMilliseconds) * 1_000_000
    }

    /// A permission to send one request to a server: `isProbe` when it is the half-open probe (its outcome
    /// must be reported).
    enum Permission: Equatable {
        case allowed
        case probe
        case denied
    }

    /// Whether a request may go to `server` now.
    func permission(for server: Int, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Permission {
        entries.withLock { entries in
            guard entries.indices.contains(server) else { return .allowed }
            guard entries[server].isOpen else { return .allowed }
            guard now >= entries[server].openUntil, !entries[server].isProbing else { return .denied }
            entries[server].isProbing = true
            return .probe
        }
    }

    /// `server` answered: close its breaker. Returns whether it was open (it just closed).
    @discardableResult
    func recordSuccess(_ server: Int) -> Bool {
        entries.withLock { entries in
            guard entries.indices.contains(server), entries[server].isOpen else { return false }
            entries[server].isOpen = false
            entries[server].isProbing = false
            return true
        }
    }

    /// `server` timed out or refused: open its breaker for a window. Returns whether it just opened.
    @discardableResult
    func recordFailure(_ server: Int, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        entries.withLock { entries in
            guard entries.indices.contains(server) else { return false }
            entries[server].failures += 1
            let wasOpen = entries[server].isOpen
            entries[server].isOpen = true
            entries[server].isProbing = false
            entries[server].openUntil = now + openNanoseconds
            if !wasOpen { entries[server].openings += 1 }
            return !wasOpen
        }
    }

    /// Every server's breaker.
    var snapshot: [Entry] { entries.withLock { $0 } }
}
