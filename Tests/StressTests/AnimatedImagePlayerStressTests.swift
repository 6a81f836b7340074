import Dispatch
import Foundation
import Synchronization
import WebImage
import XCTest

/// Run under ThreadSanitizer by `make test`.
final class AnimatedImagePlayerStressTests: XCTestCase {
    /// Small animation whose frames are made on demand.
    final class Frames: AnimatedImage {
        let count: Int
        init(count: Int) { self.count = count }
        var animatedFrameCount: Int { count }
        var animatedLoopCount: Int { 0 }
        var animatedBytesPerFrame: Int { 16 * 16 * 4 }
        func animatedFrame(at index: Int) -> PixelBuffer? { try? PixelBuffer(width: 16, height: 16) }
        func animatedDuration(at index: Int) -> Double { 0.012 }
    }

    /// play / pause / seek / replace / memory pressure from four threads while the 240 Hz ticker runs.
    func testConcurrentControlWhileTicking() {
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 240
        let frames = Mutex(0)
        player.onFrameChange = { _ in frames.withLock { $0 += 1 } }
        player.image = Frames(count: 12)
        let deadline = Date().addingTimeInterval(1.5)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var operations = 0
            while Date() < deadline {
                switch (worker + operations) % 7 {
                case 0: player.play()
                case 1: player.pause()
                case 2: player.currentFrameIndex = operations % 12
                case 3: if operations % 50 == 0 { player.image = Frames(count: 5 + operations % 20) }
                case 4: player.handleMemoryPressure()
                case 5: _ = player.currentFrame
                default: player.step(by: 0.013)
                }
                operations += 1
            }
        }
        player.play()
        let moved = expectation(description: "still plays afterwards")
        player.onFrameChange = { _ in moved.fulfill() }
        wait(for: [moved], timeout: 5)
        player.pause()
        XCTAssertGreaterThan(frames.withLock { $0 }, 0)
    }
}
