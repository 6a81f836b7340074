import Dispatch
import Foundation
import ImageCodec

extension ImageCache {
    /// `getImage(forKey:type:)` on an image queue; `completion` runs there.
    public func getImage(forKey key: String, type: ImageCacheType = .all,
                         completion: @escaping @Sendable (Result<Image?, WebImageError>) -> Void) {
        if type.contains(.memory),
           let image = memoryCache.object(forKey: ImageCacheKey(key, variant: DecodeVariant(options: [], cache: self))) {
            completion(.success(image))
            return
        }
        ImageQueues.shared.nextQueue().async { [self] in
            completion(Result { () throws(WebImageError) -> Image? in try getImage(forKey: key, type: type) })
        }
    }

    /// `getImage(forKey:type:)` without blocking the calling task's thread.
    public func image(forKey key: String, type: ImageCacheType = .all) async throws(WebImageError) -> Image? {
        let result = await withCheckedContinuation { continuation in
            getImage(forKey: key, type: type) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }
}
