import Foundation
import TestSupport
import WebImage
import XCTest

/// Real animated files from the corpus play through every frame with the file's durations.
final class AnimatedImagePlayerCorpusTests: XCTestCase {
    func testCorpusAnimationsPlayThroughEveryFrame() throws {
        let entries: [Corpus.Entry]
        do { entries = try Corpus.entries() } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        let animated = entries.filter {
            $0.isExpectedOK && ($0.frameCount ?? 1) > 1 && ($0.frameCount ?? 0) <= 150 && !$0.isHuge
                && ["gif", "apng", "webp"].contains($0.format)
        }
        var played: [String: Int] = [:]
        for entry in animated {
            let image = try ImageDecoder.decode(try Data(contentsOf: entry.url))
            XCTAssertEqual(image.frameCount, entry.frameCount, entry.path)
            let player = AnimatedImagePlayer()
            player.preferredFramesPerSecond = 0
            player.maxBufferSize = 64 * 1024 * 1024
            player.image = image
            XCTAssertTrue(player.isPlaying, entry.path)
            // Step exactly each frame's duration (after the browser rule); a buffer miss holds one step.
            var visited = [0]
            var elapsed = 0.0
            var steps = 0
            while visited.count < image.frameCount && steps < image.frameCount * 4 {
                let current = player.currentFrameIndex
                let duration = ImageFrame.displayDuration(forStoredDelay: image.duration(at: current))
                player.waitUntilBufferingIsIdle()
                var next = player.step(by: duration)
                if next == current {
                    player.waitUntilBufferingIsIdle()
                    next = player.step(by: 0)
                }
                steps += 1
                if next != current {
                    XCTAssertEqual(next, (current + 1) % image.frameCount, "\(entry.path): frames play in order")
                    if next == 0 { break }
                    visited.append(next)
                    elapsed += duration
                }
            }
            XCTAssertEqual(visited, Array(0..<image.frameCount), "\(entry.path) played every frame")
            let expectedTime = (0..<(image.frameCount - 1)).reduce(0.0) {
                $0 + ImageFrame.displayDuration(forStoredDelay: image.duration(at: $1))
            }
            XCTAssertEqual(elapsed, expectedTime, accuracy: 1e-9, "\(entry.path): each frame shown for its duration")
            played[entry.format, default: 0] += 1
        }
        XCTAssertGreaterThan(played["gif"] ?? 0, 3)
        XCTAssertGreaterThan(played["apng"] ?? 0, 3)
        XCTAssertGreaterThan(played["webp"] ?? 0, 3)
    }
}
