import Foundation
import ImageCodec

extension ImageManager {
    /// What the header of the image at `url` says (format, size, frames, durations, alpha, orientation), without
    /// decoding pixels: the bytes come as `imageData(for:options:)` gives them (disk cache, shared tier, else one
    /// transfer with this manager's limits and policy, then stored on disk, so a later `requestImage` of the
    /// same URL reads them from disk), and only the header is parsed.
    ///
    /// ```swift
    /// let info = try await manager.imageInfo(url: url)
    /// print(info.format, info.width, info.height, info.frameCount)
    /// ```
    ///
    /// - Throws: `WebImageError.fetchFailed`, `.cacheFailed` as `imageData(for:options:)` does;
    ///   `.decodeFailed` when the bytes are not an image this build reads (they are removed from the disk cache);
    ///   `CancellationError` when the task was cancelled.
    /// - Important: Thread-safe. The whole body is transferred (an origin need not honour ranges); the header
    ///   parse is O(header) and allocates no pixels. Neither cache holds a decoded image afterwards.
    public func imageInfo(url: URL, options: ImageOptions = []) async throws -> ImageInfo {
        let (data, _) = try await imageData(for: url, options: options)
        do { return try ImageDecoder.info(data) } catch let error as ImageCodecError {
            // Not an image: `imageData` stored it; `requestImage` caches nothing that does not decode, nor does this.
            if let cache {
                do { try cache.removeImage(forKey: cacheKey(for: url), type: .disk) } catch {
                    WebImageLog.logger.warning("could not remove non-image bytes", metadata: ["url": "\(url)", "error": "\(error)"])
                }
            }
            throw WebImageError.decodeFailed(error)
        }
    }
}
