import Foundation

/// What `ImageCache` keeps beside each entry's bytes on disk (as the disk cache's extended data): the image
/// scale and the HTTP caching facts of the response the bytes came from.
///
/// - Important: A value type; thread-safe.
public struct ImageCacheMetadata: Sendable, Hashable, Codable {
    /// Points-to-pixels scale of the image. Default 1.
    public var scale: Double
    /// Validators and freshness of the response, when the bytes came from HTTP.
    public var http: HTTPCachePolicy?

    /// Makes metadata.
    public init(scale: Double = 1, http: HTTPCachePolicy? = nil) {
        self.scale = scale
        self.http = http
    }

    /// JSON bytes for the disk cache.
    func encoded() throws -> Data { try JSONEncoder().encode(self) }

    /// Reads metadata written by `encoded()`; `nil` for absent or unreadable bytes (an entry written by
    /// another tool still serves its bytes).
    static func decode(_ data: Data?) -> ImageCacheMetadata? {
        guard let data, !data.isEmpty else { return nil }
        do { return try JSONDecoder().decode(ImageCacheMetadata.self, from: data) } catch { return nil }
    }
}
