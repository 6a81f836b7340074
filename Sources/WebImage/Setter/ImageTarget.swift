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
        imageSetter.setImage(with: url, placeholder: placeholder, options: options, thumbnailPixelSize: thumbnailPixelSize,
                             manager: manager, queue: displayQueue, apply: { [weak self] image in self?.present(image) },
                             progress: progress, transform: transform, completion: completion)
    }

    /// Cancels this target's request in flight.
    public func cancelImageRequest() { imageSetter.cancel() }
}
