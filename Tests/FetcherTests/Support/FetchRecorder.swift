import Fetcher
import Foundation
import Synchronization
import XCTest

/// Records every callback of one `FetchOperation` and fulfils an expectation on completion. Over-fulfilment
/// (a second completion) fails the test.
final class FetchRecorder: Sendable {
    struct Events: Sendable {
        var responses: [FetchResponse] = []
        var chunks: [Data] = []
        var progress: [Int64] = []
        var expected: [Int64?] = []
        var completions: [Result<FetchResult, FetchError>] = []
        var callbacksAfterCompletion = 0
        /// Callbacks that ran off the network thread.
        var callbacksOffThread = 0

        var result: Result<FetchResult, FetchError>? { completions.first }
        var error: FetchError? {
            if case .failure(let error)? = result { return error }
            return nil
        }
        var body: Data? { try? result?.get().body }
    }

    let events = Mutex(Events())
    let done: XCTestExpectation
    private let network: NetworkThread?

    init(_ done: XCTestExpectation, thread: NetworkThread? = nil) {
        self.done = done
        self.network = thread
        done.assertForOverFulfill = true
    }

    /// Starts `request` on `queue`, recording into this recorder.
    @discardableResult
    func start(_ request: FetchRequest, on queue: FetchQueue, wantsData: Bool = true) -> FetchOperation {
        var onData: (@Sendable (Data) -> Void)?
        var onProgress: (@Sendable (Int64, Int64?) -> Void)?
        if wantsData {
            onData = { @Sendable chunk in self.recordChunk(chunk) }
            onProgress = { @Sendable received, expected in self.recordProgress(received, expected) }
        }
        return queue.fetch(request, onResponse: { @Sendable response in self.recordResponse(response) },
                           onData: onData, onProgress: onProgress) { @Sendable result in
            self.recordCompletion(result)
            self.done.fulfill()
        }
    }

    private func recordResponse(_ response: FetchResponse) {
        let onThread = network?.isCurrent ?? true
        events.withLock { events in
            if !onThread { events.callbacksOffThread += 1 }
            if !events.completions.isEmpty { events.callbacksAfterCompletion += 1 }
            events.responses.append(response)
        }
    }

    private func recordChunk(_ chunk: Data) {
        let onThread = network?.isCurrent ?? true
        events.withLock { events in
            if !onThread { events.callbacksOffThread += 1 }
            if !events.completions.isEmpty { events.callbacksAfterCompletion += 1 }
            events.chunks.append(chunk)
        }
    }

    private func recordProgress(_ received: Int64, _ expected: Int64?) {
        events.withLock { events in
            if !events.completions.isEmpty { events.callbacksAfterCompletion += 1 }
            events.progress.append(received)
            events.expected.append(expected)
        }
    }

    private func recordCompletion(_ result: Result<FetchResult, FetchError>) {
        let onThread = network?.isCurrent ?? true
        events.withLock { events in
            if !onThread { events.callbacksOffThread += 1 }
            if !events.completions.isEmpty { events.callbacksAfterCompletion += 1 }
            events.completions.append(result)
        }
    }

    var snapshot: Events { events.withLock { $0 } }
}

extension XCTestCase {
    /// Fetches `request` on `queue`, waits for its completion and returns everything it saw.
    func fetchAndWait(_ request: FetchRequest, on queue: FetchQueue, timeout: Double = 20,
                      file: StaticString = #filePath, line: UInt = #line) -> FetchRecorder.Events {
        let recorder = FetchRecorder(expectation(description: "completion of \(request.url)"), thread: queue.thread)
        recorder.start(request, on: queue)
        wait(for: [recorder.done], timeout: timeout)
        flush(queue.thread)
        let events = recorder.snapshot
        XCTAssertEqual(events.completions.count, 1, "exactly one completion", file: file, line: line)
        XCTAssertEqual(events.callbacksAfterCompletion, 0, "nothing after completion", file: file, line: line)
        XCTAssertEqual(events.callbacksOffThread, 0, "callbacks run on the network thread", file: file, line: line)
        return events
    }

    /// Waits until the network thread has run everything submitted so far (a barrier, not a sleep).
    func flush(_ thread: NetworkThread) {
        let barrier = expectation(description: "network thread barrier")
        if thread.perform({ barrier.fulfill() }) {
            wait(for: [barrier], timeout: 10)
        } else {
            barrier.fulfill()
        }
    }

    /// Open file descriptors of this process (entries of /proc/self/fd).
    func openFileDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    /// What each open file descriptor points at (`socket:[…]`, `pipe:[…]`, a path, `anon_inode:[eventpoll]`, …),
    /// leaving out eventfds: libdispatch gives some of its worker threads one, lazily and for their lifetime,
    /// which is not ours to close (libcurl 7.88 wakes its poll with a socket pair, NIO's eventfds sit beside an
    /// epoll descriptor that is counted).
    func openFileDescriptorTargets() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { fd in
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
        }.filter { $0 != "anon_inode:[eventfd]" }.sorted()
    }
}

/// Deterministic test payloads.
func testPayload(_ count: Int, seed: UInt8 = 7) -> Data {
    var bytes = [UInt8](repeating: 0, count: count)
    var value = UInt32(seed)
    for index in bytes.indices {
        value = value &* 1_664_525 &+ 1_013_904_223
        bytes[index] = UInt8(truncatingIfNeeded: value >> 24)
    }
    return Data(bytes)
}
