/// The Fetcher module: HTTP(S) and file loading over libcurl on one network thread.
public enum FetcherModule {
    /// The module's version.
    public static let version = "0.1.0"
}
