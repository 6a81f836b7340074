/// The WebImage pipeline module.
public enum WebImageModule {
    /// The module's version.
    public static let version = "0.1.0"
}
