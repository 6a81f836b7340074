/// The Fetcher module: HTTP(S) and file loading over libcurl on one network thread.
///
/// - `NetworkThread`: the thread (`webimage.network`) running the libcurl multi loop; `NetworkThread.shared`
///   for the process, private ones for tests (`stop()`, `join()`). Its `activity` counts transfers in flight.
/// - `FetchQueue`: where fetches start. `fetch(_:onResponse:onData:onProgress:completion:)` returns a
///   `FetchOperation` at once; `try await fetch(_:)` is the async form. At most `maxConcurrentTransfers` (6) run,
///   by `FetchPriority` then FIFO/LIFO; `suspend()`, `resume()`, `cancelAll()`; identical in-flight requests
///   share one transfer (each caller keeps its callbacks and may cancel alone).
/// - `FetchRequest` (URL, headers, timeout 15 s, credentials, cookies, TLS policy, size and redirect limits,
///   priority, failed-URL opt-in), `FetchResponse` (final URL, status, headers, expected length),
///   `FetchResult` (response + body), `FetchError` (typed, keeps curl code / HTTP status / errno;
///   `.notModified` for 304; `isTransient`), `FailedURLList` (opt-in list of URLs that failed for good).
///
/// Callbacks run on the network thread, in order, and every operation completes exactly once.
public enum FetcherModule {
    /// The module's version.
    public static let version = "0.1.0"
}
