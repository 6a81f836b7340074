import Dispatch
import Foundation
import ImageCodec

/// Anything that shows or consumes images on its own queue: a UI toolkit's view, a tile of a renderer, a slot
/// in a server response. Conform, and `setImage(with:)` loads into it with YYWebImage's setter rules.
///
/// ```swift
/// final class Tile: ImageTarget {
///     let imageSetter = ImageSetter()
///     let displayQueue = DispatchQueue(label: "tile")
///     func display(_ image: Image?) { /* draw image.firstFrame.buffer */ }
/// }
/// tile.setImage(with: url, placeholder: grey)
/// ```
///
/// - Important: `display(_:)` is always called on `displayQueue`.
public protocol ImageTarget: AnyObject, Sendable {
    /// The setter that binds this target to its latest request.
    var imageSetter: ImageSetter { get }
    /// The queue `display(_:)` runs on.
    var displayQueue: DispatchQueue { get }
    /// Shows `image` (`nil` clears). Called on `displayQueue`.
    func display(_ image: Image?)
    /// Shows `image` for `request`, the request it belongs to (its URL, thumbnail size, options; the
    /// placeholder shown while it loads belongs to it too; `nil` when there is no request, as after
    /// `setImage(with: nil)`). Called on `displayQueue`. Default: `display(image)`. Implement it to tell which
    /// request a cell is showing (a reused cell, a log, a thumbnail size).
    func display(_ image: Image?, for request: ImageRequest?)
}

extension ImageTarget {
    /// Calls `display(image)`.
    public func display(_ image: Image?, for request: ImageRequest?) { display(image) }
}

extension ImageTarget {
    /// Loads `url` into this target: the latest call wins; a memory-cache hit shows at once; `placeholder`
    /// shows meanwhile unless `.ignorePlaceholder`.
    public func setImage(with url: URL?, placeholder: Image? = nil, options: ImageOptions = [],
                         thumbnailPixelSize: Int? = nil, manager: ImageManager = .shared) {
        setImage(with: url, placeholder: placeholder, options: options, thumbnailPixelSize: thumbnailPixelSize,
                 manager: manager, progress: nil, transform: nil, completion: nil)
    }

    /// Loads `url` into this target and reports the outcome: `completion` runs on `displayQueue` exactly once,
    /// with `.cancelled` if a newer request replaced this one.
    ///
    /// ```swift
    /// tile.setImage(with: url) { image, url, source, stage, error in … }
    /// ```
    public func setImage(with url: URL?, placeholder: Image? = nil, options: ImageOptions = [],
                         thumbnailPixelSize: Int? = nil, manager: ImageManager = .shared,
                         progress: ImageProgress? = nil, transform: ImageTransform? = nil,
                         completion: ImageCompletion?) {
        let request = url.map { ImageRequest(url: $0, options: options, thumbnailPixelSize: thumbnailPixelSize,
                                             transformID: (transform ?? manager.sharedTransform)?.id) }
        imageSetter.setImage(with: url, placeholder: placeholder, options: options, thumbnailPixelSize: thumbnailPixelSize,
                             manager: manager, queue: displayQueue,
                             apply: { [weak self] image in self?.present(image, for: request) },
                             progress: progress, transform: transform, completion: completion)
    }

    /// Cancels this target's request in flight.
    public func cancelImageRequest() { imageSetter.cancel() }
}
