import Foundation
import TestSupport
import WebImage
import XCTest

/// Two `webimage fetch` processes with separate `--cache` folders and the same `--memcached` pool: the second
/// one's run makes no origin request.
final class FetchMemcachedCLITests: MemcachedPoolTestCase {
    private func fetch(_ urls: [URL], cache: String, memcached: String) throws -> WebImageCLI.Run {
        do {
            return try WebImageCLI.run(["fetch"] + urls.map(\.absoluteString) + ["--cache", folder.appendingPathComponent(cache).path,
                                                                               "--memcached", memcached])
        } catch let error as WebImageCLI.NotBuilt {
            throw XCTSkip(error.description)
        }
    }

    func testSecondProcessWithAnotherDiskCacheMakesNoOriginRequest() throws {
        let urls = try (0..<8).map { index -> URL in
            origin.route("/p\(index).png", .bytes(try patternPNG(seed: UInt8(index)), contentType: "image/png"))
            return origin.url("/p\(index).png")
        }
        let pool = servers.map(\.address).joined(separator: ",")
        let first = try fetch(urls, cache: "worker-1", memcached: pool)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(origin.totalRequestCount, urls.count)

        let second = try fetch(urls, cache: "worker-2", memcached: pool)
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(origin.totalRequestCount, urls.count, "the second worker's run made zero origin requests")
        XCTAssertTrue(second.stdout.contains("8 ok, 0 failed"), second.stdout)
        XCTAssertEqual(second.stdout.components(separatedBy: "  shared  ").count - 1, urls.count, second.stdout)
    }

    func testAMalformedServerListIsAClearUsageError() throws {
        let run = try fetch([origin.url("/x.png")], cache: "bad", memcached: "127.0.0.1:notaport")
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("--memcached") && run.stderr.contains("127.0.0.1:notaport"), run.stderr)
        XCTAssertEqual(origin.totalRequestCount, 0)
    }
}
