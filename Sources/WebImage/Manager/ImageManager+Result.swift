import Foundation
import ImageCodec

/// What a request asked for: the URL and everything that shapes the image delivered.
///
/// - Important: A value type; thread-safe.
public struct ImageRequest: Sendable, Hashable {
    /// The image's URL.
    public var url: URL
    /// The request's options.
    public var options: ImageOptions
    /// The thumbnail size asked for; nil for full size.
    public var thumbnailPixelSize: Int?
    /// The identifier of the transform applied, if any.
    public var transformID: String?

    /// A description of a request.
    public init(url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil, transformID: String? = nil) {
        self.url = url
        self.options = options
        self.thumbnailPixelSize = thumbnailPixelSize
        self.transformID = transformID
    }
}

/// A delivered image, where it came from, and what was asked for.
///
/// - Important: A value type; thread-safe.
public struct ImageResponse: Sendable {
    /// The image (decoded for display unless the request said otherwise).
    public var image: Image
    /// Where it came from: memory, disk, the shared tier or the network.
    public var source: ImageSource
    /// What was asked for.
    public var request: ImageRequest
    /// The image's URL (`request.url`).
    public var url: URL { request.url }
}

extension ImageManager {
    /// Loads the image at `url` and calls `completion` exactly once with its `Result`: the image with its
    /// source and request, or why there is none (`WebImageError.cancelled` when cancelled). The same pipeline
    /// as `requestImage(url:…)`, whose five-argument completion it wraps; partial images (`.progressive`) go to
    /// `partial`.
    ///
    /// ```swift
    /// manager.loadImage(url: url, thumbnailPixelSize: 200) { result in
    ///     switch result {
    ///     case .success(let response): show(response.image)
    ///     case .failure(let error): log(error)        // a 404, a decode failure, a cancel…
    ///     }
    /// }
    /// ```
    ///
    /// - Important: Thread-safe. `completion`, `partial` and `progress` run on the network thread or an image
    ///   queue (a memory hit: on the caller's thread, before this returns); keep them short.
    @discardableResult
    public func loadImage(url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil,
                          transform: ImageTransform? = nil, progress: ImageProgress? = nil,
                          partial: (@Sendable (Image) -> Void)? = nil,
                          completion: @escaping @Sendable (Result<ImageResponse, WebImageError>) -> Void) -> ImageOperation {
        let request = ImageRequest(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize,
                                   transformID: (transform ?? sharedTransform)?.id)
        return requestImage(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize, progress: progress,
                            transform: transform) { image, _, source, stage, error in
            switch stage {
            case .progress:
                if let image { partial?(image) }
            case .cancelled:
                completion(.failure(.cancelled(url)))
            case .finished:
                if let image {
                    completion(.success(ImageResponse(image: image, source: source, request: request)))
                } else {
                    completion(.failure(error ?? .transformFailed(url)))
                }
            }
        }
    }
}
