@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// Hostile `file` URLs: read by the fetcher's own reader, regular files only, size checked before reading.
final class HostileFileTests: FetchTestCase {
    private var folder: URL!
    private let timeout = 2.0

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder) // best effort: a temporary folder
        super.tearDown()
    }

    private func file(_ url: URL) -> FetchRequest { FetchRequest(url: url, timeout: timeout) }

    func testDevZeroIsRefusedAsADevice() {
        let events = fetchHostile("file:///dev/zero", file(URL(fileURLWithPath: "/dev/zero")), on: queue,
                                  bound: timeout + 1)
        XCTAssertEqual(events.error, .notRegularFile(path: "/dev/zero", kind: .characterDevice))
        XCTAssertTrue(events.chunks.isEmpty)
    }

    func testFIFOIsRefusedWithoutBlocking() throws {
        let fifo = folder.appendingPathComponent("pipe")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0, "mkfifo errno \(errno)")
        let events = fetchHostile("a FIFO", file(fifo), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .notRegularFile(path: fifo.path, kind: .fifo))
    }

    func testDirectoryIsEISDIR() {
        let events = fetchHostile("a directory", file(folder), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .fileUnreadable(path: folder.path, errno: EISDIR))
    }

    func testSparse2GBFileIsRefusedBeforeReading() throws {
        let sparse = try makeSparseFile("sparse.bin", size: 2 << 30)
        let events = fetchHostile("2 GiB sparse file", file(sparse), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .responseTooLarge(limit: FetchRequest.defaultMaximumResponseSize))
        XCTAssertTrue(events.chunks.isEmpty, "refused on its size, before any read")
    }

    func testAFileURLNamingAnotherHostIsNotReadLocally() throws {
        let plain = folder.appendingPathComponent("a.bin")
        try testPayload(10).write(to: plain)
        let remote = try XCTUnwrap(URL(string: "file://files.example\(plain.path)"))
        XCTAssertEqual(fetchAndWait(file(remote), on: queue).error, .invalidURL(remote.absoluteString))
        let local = try XCTUnwrap(URL(string: "file://localhost\(plain.path)"))
        XCTAssertEqual(fetchAndWait(file(local), on: queue).body, testPayload(10))
    }

    func testFileURLsCanBeRefused() throws {
        let plain = folder.appendingPathComponent("a.bin")
        try testPayload(10).write(to: plain)
        var request = file(plain)
        request.allowsFileURLs = false
        XCTAssertEqual(fetchAndWait(request, on: queue).error, .fileURLRefused(plain))
        XCTAssertEqual(fetchAndWait(file(plain), on: queue).body, testPayload(10), "allowed by default")
    }

    func testALargeFileIsReadInChunksAndCancellable() throws {
        let large = try makeSparseFile("large.bin", size: 32 << 20)
        let events = fetchAndWait(file(large), on: queue)
        XCTAssertEqual(events.body?.count, 32 << 20)
        XCTAssertGreaterThan(events.chunks.count, 1, "read a chunk per turn of the network loop")

        // Cancelled from its own data callback (on the network thread), while chunks remain to be read.
        let done = expectation(description: "cancelled")
        let completions = Mutex<[Result<FetchResult, FetchError>]>([])
        let operationBox = Mutex<FetchOperation?>(nil)
        let chunksSeen = Mutex(0)
        let operation = queue.fetch(file(large), onData: { _ in
            chunksSeen.withLock { $0 += 1 }
            operationBox.withLock { $0 }?.cancel()
        }) { result in
            completions.withLock { $0.append(result) }
            done.fulfill()
        }
        operationBox.withLock { $0 = operation }
        wait(for: [done], timeout: 5)
        flush(thread)
        guard case .failure(.cancelled)? = completions.withLock({ $0.first }) else {
            return XCTFail("got \(completions.withLock { $0 })")
        }
        XCTAssertLessThan(chunksSeen.withLock { $0 }, events.chunks.count, "stopped before the end")
    }

    func testFileOverTheLimitIsRefusedOnItsSize() throws {
        let plain = folder.appendingPathComponent("a.bin")
        try testPayload(1_000).write(to: plain)
        var request = file(plain)
        request.maximumResponseSize = 500
        XCTAssertEqual(fetchAndWait(request, on: queue).error, .responseTooLarge(limit: 500))
        request.maximumResponseSize = 1_000
        XCTAssertEqual(fetchAndWait(request, on: queue).body?.count, 1_000, "exactly the limit is fine")
    }

    private func makeSparseFile(_ name: String, size: Int) throws -> URL {
        let url = folder.appendingPathComponent(name)
        let descriptor = open(url.path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "open errno \(errno)")
        defer { close(descriptor) }
        XCTAssertEqual(ftruncate(descriptor, off_t(size)), 0, "ftruncate errno \(errno)") // no real write
        return url
    }
}
