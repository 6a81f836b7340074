import Foundation

/// Whether an `ImageService` can take more uncached work, for `/healthz`.
///
/// - Important: A value type; thread-safe.
public struct ImageServiceHealth: Sendable, Equatable, CustomStringConvertible {
    /// Pipelines running now, and their limit (`maxConcurrency`).
    public var runningPipelines: Int
    /// `ImageServiceConfiguration.maxConcurrency`.
    public var maxPipelines: Int
    /// Origin transfers running now.
    public var activeTransfers: Int
    /// `ImageServiceConfiguration.maxConcurrentTransfers`.
    public var maxTransfers: Int
    /// Requests waiting for a transfer slot.
    public var waitingTransfers: Int

    /// True when an uncached request would be refused or kept waiting: every pipeline slot is busy, or every
    /// transfer slot is busy and at least `maxTransfers` requests wait for one. Cached results are still served.
    public var isSaturated: Bool {
        runningPipelines >= maxPipelines || (activeTransfers >= maxTransfers && waitingTransfers >= maxTransfers)
    }

    /// One line: `ok` or `saturated`, then the counts (the body of `/healthz`).
    public var description: String {
        "\(isSaturated ? "saturated" : "ok"): pipelines \(runningPipelines)/\(maxPipelines), "
            + "origin transfers \(activeTransfers)/\(maxTransfers), waiting \(waitingTransfers)"
    }
}

extension ImageService {
    /// The service's load now (two lock reads; O(1)).
    public var health: ImageServiceHealth {
        let gate = gate.snapshot
        return ImageServiceHealth(runningPipelines: runningCount, maxPipelines: configuration.maxConcurrency,
                                  activeTransfers: gate.active, maxTransfers: gate.totalLimit, waitingTransfers: gate.waiting)
    }

    /// Ends every origin transfer in flight and every wait for one (their requests are answered 503 with
    /// `Retry-After`), and starts no new one: the end of a shutdown's grace. Cached results are still served.
    ///
    /// - Important: Thread-safe; idempotent; cannot be undone.
    public func cancelOriginTransfers() {
        gate.closeAndCancelAll()
    }
}
