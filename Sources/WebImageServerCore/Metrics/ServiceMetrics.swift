import Metrics

/// The service's metrics through swift-metrics (whatever backend the process bootstrapped; the Hummingbird
/// adapter uses swift-prometheus):
///
/// | metric | kind | labels |
/// |---|---|---|
/// | `webimage_requests_total` | counter | `status` |
/// | `webimage_request_duration_seconds` | histogram (timer) | – |
/// | `webimage_cache_hits_total` | counter | `tier`: `result_memory`, `result_disk`, `original_disk`, `original_shared`, `coalesced` |
/// | `webimage_origin_fetches_total` | counter | – |
/// | `webimage_origin_bytes_total` | counter | – |
/// | `webimage_decode_budget_waits_total` | counter | – |
/// | `webimage_saturated_total` | counter | – |
///
/// - Important: Thread-safe.
///
/// Every metric is made from the factory at the time it is recorded, never stored when the service is made: an
/// `ImageService` is usually made before the process bootstraps swift-metrics (the `webimage-server` command
/// makes it before `ImageServer` does), and a metric made then stays bound to the no-op backend for ever (the
/// executable reported no duration, origin or saturation metric: ExecutableMetricsReviewTests). The factory
/// hands back the same series for the same label.
struct ServiceMetrics: Sendable {
    private var duration: Metrics.Timer { Metrics.Timer(label: "webimage_request_duration_seconds", preferredDisplayUnit: .seconds) }
    private var originFetches: Counter { Counter(label: "webimage_origin_fetches_total") }
    private var originBytes: Counter { Counter(label: "webimage_origin_bytes_total") }
    private var budgetWaits: Counter { Counter(label: "webimage_decode_budget_waits_total") }
    private var saturated: Counter { Counter(label: "webimage_saturated_total") }

    func request(status: Int, nanoseconds: Int64) {
        Counter(label: "webimage_requests_total", dimensions: [("status", String(status))]).increment()
        duration.recordNanoseconds(nanoseconds)
        if status == 503 { saturated.increment() }
    }

    func hit(_ tier: ResultTier) {
        Counter(label: "webimage_cache_hits_total", dimensions: [("tier", tier.rawValue)]).increment()
    }

    func originFetch(bytes: Int) {
        originFetches.increment()
        originBytes.increment(by: bytes)
    }

    func decodeBudgetWait() { budgetWaits.increment() }
}
