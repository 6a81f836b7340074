@testable import Fetcher
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Review: the `FileSource` reader when the read is cancelled part-way or the file changes under it.
final class FetcherFileReadReviewTests: FetchTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("review-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder) // best effort: a temporary folder
        super.tearDown()
    }

    private struct Seen: Sendable {
        var chunks = 0
        var chunksAfterCancel = 0
        var cancelled = false
        var completions: [Result<FetchResult, FetchError>] = []
    }

    func testCancelAfterTheFirstChunkCompletesOnceWithCancelled() throws {
        let url = folder.appendingPathComponent("big.bin")
        try testPayload(8 << 20).write(to: url)
        let seen = Mutex(Seen())
        let operation = Mutex<FetchOperation?>(nil)
        let published = DispatchSemaphore(value: 0)
        let done = expectation(description: "completion")
        done.assertForOverFulfill = true
        let started = queue.fetch(FetchRequest(url: url, timeout: 10), onResponse: { _ in }, onData: { _ in
            // The operation is published by the test thread after `fetch` returns: the first chunk waits for it
            // (a loaded machine read the whole file before the test thread ran again), then cancels.
            if operation.withLock({ $0 }) == nil { _ = published.wait(timeout: .now() + 10) }
            let target = operation.withLock { $0 }
            let cancelNow = seen.withLock { s -> Bool in
                s.chunks += 1
                if s.cancelled { s.chunksAfterCancel += 1; return false }
                guard target != nil else { return false }
                s.cancelled = true
                return true
            }
            if cancelNow { target?.cancel() }
        }, onProgress: nil) { result in
            seen.withLock { $0.completions.append(result) }
            done.fulfill()
        }
        operation.withLock { $0 = started }
        published.signal()
        wait(for: [done], timeout: 20)
        flush(queue.thread)
        let final = seen.withLock { $0 }
        XCTAssertEqual(final.completions.count, 1)
        if case .failure(let error)? = final.completions.first {
            XCTAssertEqual(error, .cancelled)
        } else {
            // The cancel may land before the first chunk was handed over only if there was no chunk at all.
            XCTFail("a read cancelled after its first chunk succeeded: \(String(describing: final.completions.first))")
        }
        XCTAssertEqual(final.chunksAfterCancel, 0, "chunks delivered after cancel()")
    }

    /// A file truncated while it is read: the bytes delivered are fewer than the size `fstat` reported (the
    /// response's expected length); a success here hands a truncated image to the caller (and its caches).
    func testFileTruncatedWhileReadIsNotASuccess() throws {
        let url = folder.appendingPathComponent("shrinks.bin")
        try testPayload(2 << 20).write(to: url)
        let truncated = Mutex(false)
        let done = expectation(description: "completion")
        let outcome = Mutex<Result<FetchResult, FetchError>?>(nil)
        let path = url.path
        queue.fetch(FetchRequest(url: url, timeout: 10), onResponse: { _ in }, onData: { _ in
            let first = truncated.withLock { t -> Bool in defer { t = true }; return !t }
            if first { XCTAssertEqual(truncate(path, 1_000), 0) }
        }, onProgress: nil) { result in
            outcome.withLock { $0 = result }
            done.fulfill()
        }
        wait(for: [done], timeout: 20)
        switch outcome.withLock({ $0 }) {
        case .success(let result)?:
            XCTFail("a file truncated mid-read succeeded with \(result.body.count) of \(2 << 20) bytes "
                    + "(expected length \(String(describing: result.response.expectedContentLength)))")
        case .failure?: break
        case nil: XCTFail("no completion")
        }
    }
}
