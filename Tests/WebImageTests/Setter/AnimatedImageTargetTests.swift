import Dispatch
import Synchronization
import TestSupport
import WebImage
import XCTest

final class AnimatedImageTargetTests: XCTestCase {
    final class AnimatedTile: AnimatedImageTarget, @unchecked Sendable { // recorded state is only touched on displayQueue
        let imageSetter = ImageSetter()
        let displayQueue = DispatchQueue(label: "tile")
        let animationPlayer: AnimatedImagePlayer
        var stills: [Image?] = []
        var frames: [Int] = []
        init() {
            animationPlayer = AnimatedImagePlayer(deliveryQueue: displayQueue)
            animationPlayer.preferredFramesPerSecond = 0
        }
        func display(_ image: Image?) { stills.append(image) }
        func displayFrame(_ frame: AnimatedImagePlayer.Frame) { frames.append(frame.index) }
    }

    func testAnAnimatedResultIsPlayedAndAStillOneStopsThePlayer() throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let animatedURL = fixture.serve("/anim.png", try TestImages.apng(frames: 3))
        let stillURL = fixture.serve("/still.png", try TestImages.png())
        let tile = AnimatedTile()
        let loaded = expectation(description: "animated")
        tile.setImage(with: animatedURL, manager: fixture.manager) { _, _, _, stage, _ in if stage == .finished { loaded.fulfill() } }
        wait(for: [loaded], timeout: 10)
        XCTAssertEqual(tile.animationPlayer.image?.animatedFrameCount, 3)
        XCTAssertTrue(tile.animationPlayer.isPlaying)
        for _ in 0..<6 {
            tile.animationPlayer.waitUntilBufferingIsIdle()
            tile.animationPlayer.step(by: 0.1)
        }
        tile.displayQueue.sync {}
        let frames = tile.displayQueue.sync { tile.frames }
        XCTAssertTrue(frames.contains(1) && frames.contains(2), "the player drove the target: \(frames)")

        let still = expectation(description: "still")
        tile.setImage(with: stillURL, manager: fixture.manager) { _, _, _, stage, _ in if stage == .finished { still.fulfill() } }
        wait(for: [still], timeout: 10)
        XCTAssertNil(tile.animationPlayer.image, "a still image stops the animation")
        XCTAssertEqual(tile.displayQueue.sync { tile.stills.last??.width }, 64)
    }
}
