import Dispatch
import Synchronization
import WebImage
import XCTest

final class AnimatedImagePlayerTests: XCTestCase {
    /// A player driven by hand: no ticker, started.
    private func makePlayer(_ image: FakeAnimatedImage) -> AnimatedImagePlayer {
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.image = image
        XCTAssertTrue(player.isPlaying, "runsAutomatically starts an animated image")
        return player
    }

    /// Waits for buffering queued so far, then steps: deterministic regardless of worker speed.
    @discardableResult
    private func advance(_ player: AnimatedImagePlayer, by seconds: Double) -> Int {
        player.waitUntilBufferingIsIdle()
        return player.step(by: seconds)
    }

    func testFramesAdvanceInOrderAtTheirDurations() {
        let image = FakeAnimatedImage(durations: [0.1, 0.2, 0.05, 0.1])
        let player = makePlayer(image)
        var shown: [Int] = [player.currentFrameIndex]
        // 0.05 s steps for 3 seconds: long enough for several loops.
        for _ in 0..<60 {
            let index = advance(player, by: 0.05)
            if index != shown.last { shown.append(index) }
        }
        XCTAssertGreaterThan(shown.count, 12)
        for (a, b) in zip(shown, shown.dropFirst()) {
            XCTAssertEqual(b, (a + 1) % 4, "frames must follow each other without skipping: \(shown)")
        }
        // Frame 1 lasts 0.2 s: it must never be left after a single 0.05 s step.
        let frame1 = AnimatedImagePlayer(); frame1.preferredFramesPerSecond = 0; frame1.image = image
        frame1.currentFrameIndex = 1
        XCTAssertEqual(advance(frame1, by: 0.05), 1)
        XCTAssertEqual(advance(frame1, by: 0.05), 1)
        XCTAssertEqual(advance(frame1, by: 0.05), 1)
    }

    func testShortDurationsAreClampedToTheBrowserRule() {
        // 0.005 s plays as 0.1 s; 0.011 s is kept.
        let image = FakeAnimatedImage(durations: [0.005, 0.011, 0.5])
        let player = makePlayer(image)
        XCTAssertEqual(advance(player, by: 0.05), 0, "a 0.005 s frame lasts 0.1 s")
        advance(player, by: 0.05) // due now: buffer miss or advance
        let index = advance(player, by: 0)
        XCTAssertEqual(index, 1)
        // Frame 1 lasts 0.011 s: the next 0.011 s step moves on.
        player.waitUntilBufferingIsIdle()
        var after = advance(player, by: 0.011)
        if after == 1 { after = advance(player, by: 0) } // a buffer miss holds one step
        XCTAssertEqual(after, 2)
    }

    func testLongStallAdvancesOneFrameOnly() {
        let image = FakeAnimatedImage(durations: [0.1, 0.1, 0.1, 0.1, 0.1])
        let player = makePlayer(image)
        // Warm the buffer.
        for _ in 0..<6 { advance(player, by: 0.1) }
        let before = player.currentFrameIndex
        var after = advance(player, by: 30)
        if after == before { after = advance(player, by: 0) } // buffer miss holds, then shows
        XCTAssertEqual(after, (before + 1) % 5, "a 30 s stall must not skip frames")
        // The leftover time was clamped to the next frame's duration: one more 0.1 s step moves exactly one.
        let next = advance(player, by: 0.1)
        XCTAssertTrue(next == (after + 1) % 5 || next == after, "moved from \(after) to \(next)")
    }

    func testLoopCountStopsOnTheLastFrameAndCallsLoopEnd() {
        let image = FakeAnimatedImage(durations: [0.1, 0.1, 0.1], loopCount: 2)
        let player = makePlayer(image)
        let ended = expectation(description: "loop end")
        player.onLoopEnd = { ended.fulfill() }
        var transitions = 0
        var last = player.currentFrameIndex
        for _ in 0..<100 where player.isPlaying {
            let index = advance(player, by: 0.1)
            if index != last { transitions += 1; last = index }
        }
        wait(for: [ended], timeout: 5)
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(player.currentFrameIndex, 2, "stops on the last frame")
        XCTAssertEqual(player.currentLoop, 2)
        XCTAssertEqual(transitions, 5, "two plays of three frames: 0→1→2→0→1→2")
        XCTAssertEqual(advance(player, by: 1), 2, "stepping after the end changes nothing")
        // play() starts over from the loop count.
        player.play()
        XCTAssertTrue(player.isPlaying)
        XCTAssertEqual(player.currentLoop, 0)
    }

    func testJumpResetsTheBufferAndTime() {
        let image = FakeAnimatedImage(durations: [Double](repeating: 0.1, count: 10))
        let player = makePlayer(image)
        for _ in 0..<8 { advance(player, by: 0.1) }
        player.waitUntilBufferingIsIdle()
        XCTAssertGreaterThan(player.bufferedFrameCount, 0)
        let decodesBefore = image.decodedIndexes.count
        let target = (player.currentFrameIndex + 5) % 10
        player.currentFrameIndex = target
        XCTAssertEqual(player.currentFrameIndex, target)
        XCTAssertEqual(player.currentFrame?.buffer.pixel(x: 0, y: 0).r, UInt8(target))
        XCTAssertEqual(player.bufferedFrameCount, 0, "a jump empties the buffer")
        XCTAssertEqual(image.decodedIndexes.count, decodesBefore + 1)
        XCTAssertEqual(image.decodedIndexes.last, target, "the jump decodes its frame synchronously")
        // Time restarted: half a frame later we are still there.
        XCTAssertEqual(advance(player, by: 0.05), target)
        player.currentFrameIndex = 99 // out of range: ignored
        XCTAssertEqual(player.currentFrameIndex, target)
    }

    func testFrameChangesAreDeliveredOnTheDeliveryQueue() {
        let queue = DispatchQueue(label: "test.delivery")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let player = AnimatedImagePlayer(deliveryQueue: queue)
        player.preferredFramesPerSecond = 0
        let seen = Mutex<[Int]>([])
        let onQueue = Mutex(true)
        player.onFrameChange = { frame in
            if DispatchQueue.getSpecific(key: key) != 42 { onQueue.withLock { $0 = false } }
            seen.withLock { $0.append(frame.index) }
        }
        player.image = FakeAnimatedImage(durations: [0.1, 0.1, 0.1])
        for _ in 0..<10 { advance(player, by: 0.1) }
        queue.sync {}
        XCTAssertTrue(onQueue.withLock { $0 })
        let indexes = seen.withLock { $0 }
        XCTAssertEqual(indexes.first, 0, "setting the image shows frame 0")
        XCTAssertGreaterThan(indexes.count, 4)
    }

    func testBrokenFrameHoldsThePreviousPixels() {
        let image = FakeAnimatedImage(durations: [0.1, 0.1, 0.1], failingFrames: [1])
        let player = makePlayer(image)
        var sawIndex1 = false
        for _ in 0..<10 {
            let index = advance(player, by: 0.1)
            if index == 1 {
                sawIndex1 = true
                XCTAssertEqual(player.currentFrame?.buffer.pixel(x: 0, y: 0).r, 0, "frame 1 failed: frame 0's pixels stay")
            }
        }
        XCTAssertTrue(sawIndex1, "a broken frame still takes its time slot")
    }

    func testTheBuiltInTickerPlays() {
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 120
        let reached = expectation(description: "frame 3 shown by the ticker")
        player.onFrameChange = { frame in if frame.index == 3 { reached.fulfill() } }
        player.image = FakeAnimatedImage(durations: [0.02, 0.02, 0.02, 0.02, 10])
        wait(for: [reached], timeout: 10)
        player.pause()
        XCTAssertFalse(player.isPlaying)
    }

    func testSpriteSheetFramesShareOneBitmapWithTheirCells() throws {
        var bitmap = try PixelBuffer(width: 8, height: 2)
        for i in 0..<4 { bitmap.setPixel(x: i * 2, y: 0, to: RGBA(r: UInt8(i), g: 0, b: 0)) }
        let sheet = try SpriteSheetImage(sheet: bitmap, frames: (0..<4).map {
            .init(rect: PixelRect(x: $0 * 2, y: 0, width: 2, height: 2), duration: 0.1)
        })
        XCTAssertEqual(sheet.animatedBytesPerFrame, 0)
        XCTAssertThrowsError(try SpriteSheetImage(sheet: bitmap, frames: [.init(rect: PixelRect(x: 7, y: 0, width: 2, height: 2), duration: 0.1)]))
        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.image = sheet
        XCTAssertEqual(player.currentFrame?.contentsRect, PixelRect(x: 0, y: 0, width: 2, height: 2))
        var index = 0
        for _ in 0..<4 where index != 2 { index = advance(player, by: 0.1) }
        if index != 2 { index = advance(player, by: 0) }
        XCTAssertEqual(index, 2)
        XCTAssertEqual(player.currentFrame?.contentsRect, PixelRect(x: 4, y: 0, width: 2, height: 2))
        XCTAssertEqual(player.currentFrame?.buffer, bitmap)
    }
}
