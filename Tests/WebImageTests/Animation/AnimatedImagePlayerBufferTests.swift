import WebImage
import XCTest

final class AnimatedImagePlayerBufferTests: XCTestCase {
    private func advance(_ player: AnimatedImagePlayer, by seconds: Double) {
        player.waitUntilBufferingIsIdle()
        player.step(by: seconds)
    }

    func testBufferStaysWithinMaxBufferCountAndGrowsGradually() {
        // 1 MB frames, 5 MB cap → 5 frames at most.
        let image = FakeAnimatedImage(durations: [Double](repeating: 0.1, count: 100), frameWidth: 512, frameHeight: 512)
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.maxBufferSize = 5 * 1024 * 1024
        player.image = image
        XCTAssertEqual(player.maxBufferCount, 5)
        var sizes: [Int] = []
        for _ in 0..<300 {
            advance(player, by: 0.1)
            player.waitUntilBufferingIsIdle()
            sizes.append(player.bufferedFrameCount)
        }
        XCTAssertLessThanOrEqual(sizes.max() ?? 0, 5)
        XCTAssertEqual(sizes.max(), 5, "the buffer fills up to its bound")
        XCTAssertLessThan(sizes.first ?? 0, 5, "and grows gradually after start")
        // Every frame was decoded about once per loop, not once per step.
        XCTAssertLessThan(image.decodedIndexes.count, 400)
    }

    func testMemoryPressureDropsToTheNextFrameThenGrowsBack() {
        let image = FakeAnimatedImage(durations: [Double](repeating: 0.1, count: 40))
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.maxBufferSize = 10 * 1024 * 1024
        player.image = image
        for _ in 0..<60 { advance(player, by: 0.1) }
        player.waitUntilBufferingIsIdle()
        XCTAssertGreaterThan(player.bufferedFrameCount, 3)
        let next = (player.currentFrameIndex + 1) % 40
        player.handleMemoryPressure()
        XCTAssertLessThanOrEqual(player.bufferedFrameCount, 1, "only the next frame (\(next)) is kept")
        // For the next ~60…180 fetches, each fetch decodes a single frame.
        for _ in 0..<40 {
            advance(player, by: 0.1)
            player.waitUntilBufferingIsIdle()
            XCTAssertLessThanOrEqual(player.bufferedFrameCount, 1)
        }
        // Then it grows back.
        var grown = 0
        for _ in 0..<400 {
            advance(player, by: 0.1)
            player.waitUntilBufferingIsIdle()
            grown = max(grown, player.bufferedFrameCount)
        }
        XCTAssertGreaterThan(grown, 3)
    }

    func testLongFullHDAnimationKeepsBufferMemoryWithinTheComputedBound() {
        // 500 frames of 1920×1080 (8.3 MB each): a 64 MB cap allows 7 frames.
        let image = FakeAnimatedImage(durations: [Double](repeating: 0.04, count: 500), frameWidth: 1920, frameHeight: 1080)
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.maxBufferSize = 64 * 1024 * 1024
        player.image = image
        let bound = player.maxBufferCount
        XCTAssertEqual(bound, 64 * 1024 * 1024 / (1920 * 1080 * 4))
        var peakBytes = 0
        var shown = Set<Int>()
        for _ in 0..<1_200 {
            advance(player, by: 0.04)
            player.waitUntilBufferingIsIdle()
            peakBytes = max(peakBytes, player.bufferedFrameCount * image.animatedBytesPerFrame)
            shown.insert(player.currentFrameIndex)
        }
        XCTAssertLessThanOrEqual(peakBytes, bound * image.animatedBytesPerFrame)
        XCTAssertLessThanOrEqual(peakBytes, 64 * 1024 * 1024)
        XCTAssertGreaterThan(shown.count, 450, "the animation actually played through")
    }

    func testAutomaticBufferSizeFollowsMemory() {
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.image = FakeAnimatedImage(durations: [0.1, 0.1], frameWidth: 1000, frameHeight: 1000)
        // At least 10 MB → at least 2 frames of 4 MB; at most 512 frames.
        XCTAssertGreaterThanOrEqual(player.maxBufferCount, 2)
        XCTAssertLessThanOrEqual(player.maxBufferCount, AnimatedImagePlayer.maxBufferCountLimit)
        player.maxBufferSize = 1 // smaller than one frame: still one frame
        XCTAssertEqual(player.maxBufferCount, 1)
    }
}
