import Foundation
import ImageCodec
import Synchronization
import WebImage
import XCTest

/// The player never calls the caller's `AnimatedImage` while holding its lock: an image whose methods read
/// the player from another thread would otherwise wait for the lock its caller holds (a deadlock if it waited
/// on the same thread).
final class AnimatedImagePlayerLockTests: XCTestCase {
    /// An animated image whose every method checks, from another thread, that the player is not locked.
    final class ProbeImage: AnimatedImage {
        let player = Mutex<AnimatedImagePlayer?>(nil)
        let violations = Mutex<[String]>([])

        /// Reads the player on another thread; if that cannot finish in 5 s, the player's lock is held by our caller.
        private func probe(_ method: String) {
            guard violations.withLock({ $0.isEmpty }), let player = player.withLock({ $0 }) else { return }
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = player.isPlaying
                done.signal()
            }
            if done.wait(timeout: .now() + 5) == .timedOut { violations.withLock { $0.append(method) } }
        }

        var animatedFrameCount: Int { probe("animatedFrameCount"); return 3 }
        var animatedLoopCount: Int { probe("animatedLoopCount"); return 0 }
        var animatedBytesPerFrame: Int { probe("animatedBytesPerFrame"); return 16 }
        func animatedDuration(at index: Int) -> Double { probe("animatedDuration"); return 0.05 }
        func animatedContentsRect(at index: Int) -> PixelRect? { probe("animatedContentsRect"); return nil }
        func animatedFrame(at index: Int) -> PixelBuffer? {
            probe("animatedFrame")
            return try? PixelBuffer(width: 2, height: 2)
        }
    }

    func testImageMethodsRunOutsideThePlayersLock() {
        let image = ProbeImage()
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        image.player.withLock { $0 = player }
        player.image = image
        player.play()
        for _ in 0..<12 {
            player.step(by: 0.05)
            player.waitUntilBufferingIsIdle()
        }
        player.maxBufferSize = 1 << 20
        player.handleMemoryPressure()
        player.currentFrameIndex = 2
        for _ in 0..<6 { player.step(by: 0.05); player.waitUntilBufferingIsIdle() }
        XCTAssertGreaterThan(player.currentLoop, 0, "it played")
        XCTAssertEqual(image.violations.withLock { $0 }, [], "called under the player's lock")
        player.pause()
        image.player.withLock { $0 = nil }
    }
}
