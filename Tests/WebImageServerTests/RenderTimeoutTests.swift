import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// `renderTimeout`: a render that runs past it is answered 503 at once, without holding its pipeline slot, and the
/// next request is served while the stopped render winds down.
final class RenderTimeoutTests: XCTestCase {
    func testARenderPastTheTimeoutAnswers503AndFreesItsSlot() async throws {
        let root: URL
        do { root = try Corpus.require() } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        // One pipeline at a time: the next request is served only if the stopped render no longer holds the slot.
        let harness = try await ServerHarness {
            $0.maxConcurrency = 1
            $0.renderTimeout = 1
            $0.cachesResults = false
        }
        do { try await checkTimeout(harness, root: root) } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    private func checkTimeout(_ harness: ServerHarness, root: URL) async throws {
        // 3200 × 2000 decoded, blurred and encoded as AVIF at full size: seconds of work, far past 1 s.
        let big = try Data(contentsOf: root.appendingPathComponent("photos/kdewallpapers_PastelHills_3200x2000.jpg"))
        harness.origin.route("/big.jpg", .bytes(big, contentType: "image/jpeg"))
        harness.origin.route("/small.png", .bytes(try TestImages.gradient(width: 64, height: 64, format: .png), contentType: "image/png"))

        let started = ContinuousClock.now
        let slow = await harness.image([("url", harness.source("/big.jpg")), ("format", "avif"), ("blur", "40")])
        let waited = ContinuousClock.now - started
        XCTAssertEqual(slow.status, 503, String(decoding: slow.body, as: UTF8.self))
        XCTAssertEqual(slow.header("Cache-Control"), "no-store", "an error, not cached")
        XCTAssertNil(slow.header("Retry-After"), "the same render would take as long again")
        XCTAssertLessThan(waited, .seconds(20), "answered at the deadline, not when the render ends")
        XCTAssertEqual(harness.service.runningCount, 0, "the slot is free")

        let next = await harness.image([("url", harness.source("/small.png")), ("w", "32"), ("format", "png")])
        XCTAssertEqual(next.status, 200, String(decoding: next.body, as: UTF8.self))
        XCTAssertEqual(try next.decoded().width, 32)
        XCTAssertEqual(harness.service.statistics.saturated, 0)

        // The same render asked of the service directly: the error is the render's timeout, with its seconds.
        let query = "url=\(QueryString.escape(harness.source("/big.jpg")))&format=avif&blur=40"
        let direct = await harness.service.handle(ImageServiceRequest(query: query))
        XCTAssertEqual(direct.status, 503)
        XCTAssertEqual(direct.error, .renderTimeout(seconds: 1))
        XCTAssertTrue(String(decoding: direct.body, as: UTF8.self).contains("render took longer than 1"))
    }

    func testNoTimeoutWhenZero() async throws {
        let harness = try await ServerHarness { $0.renderTimeout = 0 }
        harness.origin.route("/small.png", .bytes(try TestImages.gradient(width: 64, height: 64, format: .png), contentType: "image/png"))
        let reply = await harness.image([("url", harness.source("/small.png")), ("format", "avif")])
        XCTAssertEqual(reply.status, 200)
        await harness.stop()
    }
}
