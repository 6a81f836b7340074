import Foundation
import TestSupport
import WebImageServerCore
import WebImageServerHummingbird
import XCTest

/// Clients that ask for a large result and never read: the result's bytes are shared (each response writes from
/// the cached `Data`, a chunk at a time, when the connection can take it), and connections are bounded in all.
/// Before, each response copied the whole body into its own buffer: 40 such clients of a 41 MiB result held
/// 1.6 GiB until their idle timeout, and nothing bounded how many connections there were.
final class NonReadingClientTests: XCTestCase {
    /// The process's resident bytes (`/proc/self/statm`, second field, in pages).
    static func residentBytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Accounting: N clients that never read a ~10 MB cached result add about N × (one chunk + the channel's
    /// buffer) to the process, not N copies of the result.
    func testClientsThatNeverReadShareTheCachedResult() async throws {
        try await measureNonReadingClients(tier: "result_memory")
    }

    /// The same from the result cache's disk tier (a result the memory tier does not keep: here it keeps nothing):
    /// the bytes a response is still writing are shared by the next disk hit of the same key, not read again.
    func testClientsThatNeverReadShareADiskTierResult() async throws {
        try await measureNonReadingClients(tier: "result_disk") { $0.resultMemoryCostLimit = 1 }
    }

    private func measureNonReadingClients(tier: String, file: StaticString = #filePath, line: UInt = #line,
                                          configure: @escaping (inout ImageServiceConfiguration) -> Void = { _ in }) async throws {
        let harness = try await ServerHarness(configure: configure)
        harness.origin.route("/noise.png", .bytes(try ShutdownReviewTests.noisePNG(side: 1800), contentType: "image/png"))
        let pairs = [("url", harness.source("/noise.png")), ("format", "png")]
        let control = await harness.image(pairs)
        XCTAssertEqual(control.status, 200)
        let size = control.body.count
        XCTAssertGreaterThan(size, 9 << 20, "more than the socket buffers hold")
        XCTAssertEqual(control.header("Content-Length"), String(size), "written in chunks, with its length")
        XCTAssertEqual(try control.decoded().width, 1800, "every chunk arrived, in order")
        let warm = await harness.image(pairs)
        XCTAssertEqual(warm.header("X-WebImage-Tier"), tier, "served from the result cache from now on", file: file, line: line)
        XCTAssertEqual(warm.body, control.body)

        let clients = 24
        let baseline = try Self.residentBytes()
        let target = harness.imageURL(pairs).path + "?" + (harness.imageURL(pairs).query ?? "")
        var open: [RawClient] = []
        for _ in 0..<clients {
            let client = try RawClient(port: harness.port, receiveTimeout: nil, receiveBufferSize: 4096)
            XCTAssertTrue(client.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
            open.append(client)
        }
        // Every response is written until its connection stops taking bytes; watch the peak for 3 s (a window of
        // measurement, not a wait for work: a copy per response shows at once, when the response is made).
        var peak = baseline
        let end = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < end {
            peak = max(peak, try Self.residentBytes())
            try await Task.sleep(for: .milliseconds(25))
        }
        let growth = peak - baseline
        // A shared copy implies no new copy of the result from the memory tier (read once from the disk tier);
        // allow one more whole copy for slack (allocator arenas, a read buffer) plus 512 KiB a connection (a 64 KiB
        // chunk, the 64 KiB high-water mark, NIO's and malloc's overhead). A copy per response is 24 × 9.3 MiB.
        let allowed = (tier == "result_disk" ? 2 : 1) * size + clients * (512 << 10)
        print("NonReadingClientTests: RSS grew \(growth >> 10) KiB for \(clients) clients of a \(size >> 10) KiB \(tier) result")
        XCTAssertLessThan(growth, allowed, "RSS grew \(growth >> 20) MiB for \(clients) clients of a \(size >> 20) MiB result; "
                          + "a shared result allows \(allowed >> 20) MiB, a copy per response is \((clients * size) >> 20) MiB",
                          file: file, line: line)
        for client in open { client.close() }
        await harness.stop()
    }

    /// Past `maxConnections`, a connection is answered 503 and closed at once (not queued); once one closes, a new
    /// connection is served.
    func testConnectionsPastTheLimitAreRefusedPromptly() async throws {
        let harness = try await ServerHarness(maxConnections: 3)
        var held: [RawClient] = []
        for _ in 0..<3 {
            let client = try RawClient(port: harness.port, receiveTimeout: 5)
            XCTAssertTrue(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
            guard case .bytes(let answer) = client.read() else { return XCTFail("a connection within the limit was not served") }
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), answer)
            held.append(client) // kept open (keep-alive)
        }
        let extra = try RawClient(port: harness.port, receiveTimeout: 5)
        let refused = extra.readAll()
        XCTAssertTrue(refused.hasPrefix("HTTP/1.1 503"), "the 4th connection: \(refused.isEmpty ? "no answer within 5 s" : refused)")
        XCTAssertEqual(extra.read(), .closed)

        held.removeFirst().close()
        // The limit counts open connections: the place is given back when the server sees the close.
        var served = false
        let deadline = ContinuousClock.now + .seconds(10)
        while !served, ContinuousClock.now < deadline {
            let client = try RawClient(port: harness.port, receiveTimeout: 5)
            _ = client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            served = client.readAll().hasPrefix("HTTP/1.1 200")
            if !served { try await Task.sleep(for: .milliseconds(20)) }
        }
        XCTAssertTrue(served, "a connection after one closed was not served")
        for client in held { client.close() }
        await harness.stop()
    }
}
