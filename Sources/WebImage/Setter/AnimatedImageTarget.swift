import Dispatch
import ImageCodec

/// An `ImageTarget` that plays animated images with an `AnimatedImagePlayer` (YYAnimatedImageView's role).
///
/// When `setImage(with:)` delivers an animated image, the target's player takes it and sends each frame to
/// `displayFrame(_:)`; a still image (or the placeholder) stops the player.
///
/// ```swift
/// final class AnimatedTile: AnimatedImageTarget {
///     let imageSetter = ImageSetter()
///     let displayQueue = DispatchQueue(label: "tile")
///     lazy var animationPlayer = AnimatedImagePlayer(deliveryQueue: displayQueue)
///     func display(_ image: Image?) { /* first frame or still image */ }
///     func displayFrame(_ frame: AnimatedImagePlayer.Frame) { /* frame.buffer */ }
/// }
/// ```
///
/// - Important: Give the player `displayQueue` as its delivery queue so frames arrive where `display` runs.
public protocol AnimatedImageTarget: ImageTarget {
    /// The player driving this target's animations.
    var animationPlayer: AnimatedImagePlayer { get }
    /// Shows one frame of the animation. Called on the player's delivery queue.
    func displayFrame(_ frame: AnimatedImagePlayer.Frame)
}

extension ImageTarget {
    /// Shows `image` for `request`, handing animated images to the player of an `AnimatedImageTarget`.
    func present(_ image: Image?, for request: ImageRequest?) {
        if let animated = self as? any AnimatedImageTarget {
            let player = animated.animationPlayer
            if player.onFrameChange == nil {
                player.onFrameChange = { [weak animated] frame in animated?.displayFrame(frame) }
            }
            player.image = image?.isAnimated == true ? image : nil
        }
        display(image, for: request)
    }
}
