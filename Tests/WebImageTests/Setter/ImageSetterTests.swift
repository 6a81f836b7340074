import Dispatch
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// A target that records what it shows.
final class RecordingTarget: ImageTarget, @unchecked Sendable { // `shown` is only touched on displayQueue
    let imageSetter = ImageSetter()
    let displayQueue: DispatchQueue
    private(set) var shown: [Image?] = []

    init(label: String = "target") { displayQueue = DispatchQueue(label: label) }

    func display(_ image: Image?) {
        dispatchPrecondition(condition: .onQueue(displayQueue))
        shown.append(image)
    }

    var lastShown: Image?? { displayQueue.sync { shown.last } }
}

final class ImageSetterTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    func testPlaceholderThenImage() throws {
        let url = fixture.serve("/a.png", try TestImages.png())
        let placeholder = Image(buffer: try PixelBuffer(width: 1, height: 1))
        let target = RecordingTarget()
        let done = expectation(description: "done")
        target.setImage(with: url, placeholder: placeholder, manager: fixture.manager) { _, _, source, stage, _ in
            XCTAssertEqual(stage, .finished)
            XCTAssertEqual(source, .remote)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        let shown = target.displayQueue.sync { target.shown }
        XCTAssertEqual(shown.count, 2)
        XCTAssertTrue(shown.first! === placeholder)
        XCTAssertEqual(shown.last??.width, 64)
    }

    func testIgnorePlaceholderAndAvoidSetImage() throws {
        let url = fixture.serve("/b.png", try TestImages.png())
        let target = RecordingTarget()
        let done = expectation(description: "done")
        target.setImage(with: url, placeholder: Image(buffer: try PixelBuffer(width: 1, height: 1)),
                        options: [.ignorePlaceholder, .avoidSetImage], manager: fixture.manager) { image, _, _, _, _ in
            XCTAssertNotNil(image, "the completion still gets the image")
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertTrue(target.displayQueue.sync { target.shown.isEmpty }, "nothing set on the target")
    }

    func testMemoryHitIsAppliedSynchronouslyOnTheTargetsQueue() throws {
        let url = fixture.serve("/c.png", try TestImages.png())
        _ = fixture.load(url)
        let target = RecordingTarget()
        let source = Mutex<ImageSource?>(nil)
        target.displayQueue.sync {
            target.setImage(with: url, manager: fixture.manager) { _, _, s, _, _ in source.withLock { $0 = s } }
            XCTAssertEqual(target.shown.count, 1, "shown before setImage returns")
        }
        XCTAssertEqual(source.withLock { $0 }, .memoryCacheFast)
    }

    func testANewerRequestWinsAndTheOlderOneIsCancelled() throws {
        fixture.server.route("/slow.png", HTTPTestResponse.bytes(try TestImages.png(seed: 1)).delayed(by: 0.5))
        let fast = fixture.serve("/fast.png", try TestImages.png(width: 32, height: 32, seed: 2))
        let target = RecordingTarget()
        let stages = Mutex<[String: ImageStage]>([:])
        let done = expectation(description: "both")
        done.expectedFulfillmentCount = 2
        target.setImage(with: fixture.server.url("/slow.png"), options: [.ignorePlaceholder], manager: fixture.manager) { _, _, _, stage, _ in
            stages.withLock { $0["slow"] = stage }; done.fulfill()
        }
        target.setImage(with: fast, options: [.ignorePlaceholder], manager: fixture.manager) { _, _, _, stage, _ in
            stages.withLock { $0["fast"] = stage }; done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(stages.withLock { $0 }, ["slow": .cancelled, "fast": .finished])
        XCTAssertEqual(target.lastShown??.width, 32)
    }

    /// 50 targets rebound 10,000 times to random URLs with random server delays: each ends showing the image
    /// of its last URL, no stale image is ever applied, every completion runs exactly once.
    func testSentinelUnderRandomRebinding() throws {
        let urlCount = 40
        var urls: [URL] = []
        for i in 0..<urlCount {
            // Width encodes the URL's index, so the shown image tells which URL it came from.
            fixture.server.route("/s\(i).png", HTTPTestResponse.bytes(try TestImages.png(width: 8 + i, height: 4, seed: i)).delayed(by: Double(i % 7) * 0.004))
            urls.append(fixture.server.url("/s\(i).png"))
        }
        let targets = (0..<50).map { RecordingTarget(label: "target\($0)") }
        let allURLs = urls
        let manager = fixture.manager
        let lastURLIndex = Mutex<[Int]>(Array(repeating: -1, count: 50))
        let completions = Mutex<[Int: Int]>([:])
        let stale = Mutex(0)
        let all = expectation(description: "every completion")
        all.expectedFulfillmentCount = 10_000
        for call in 0..<10_000 {
            let t = Int.random(in: 0..<50)
            let u = Int.random(in: 0..<urlCount)
            let target = targets[t]
            target.displayQueue.async {
                lastURLIndex.withLock { $0[t] = u }
                target.setImage(with: allURLs[u], options: [.ignorePlaceholder], manager: manager) { image, _, _, stage, _ in
                    guard stage != .progress else { return }
                    completions.withLock { $0[call, default: 0] += 1 }
                    if stage == .finished, let image, image.width - 8 != lastURLIndex.withLock({ $0[t] }) {
                        stale.withLock { $0 += 1 }
                    }
                    all.fulfill()
                }
            }
        }
        wait(for: [all], timeout: 120)
        XCTAssertEqual(stale.withLock { $0 }, 0, "a finished image always belongs to the target's latest URL")
        XCTAssertEqual(completions.withLock { $0.count }, 10_000)
        XCTAssertTrue(completions.withLock { $0.values.allSatisfy { $0 == 1 } })
        for (t, target) in targets.enumerated() {
            let expected = lastURLIndex.withLock { $0[t] }
            guard expected >= 0 else { continue }
            XCTAssertEqual(target.lastShown??.width, 8 + expected, "target \(t) shows its last URL")
        }
    }
}
