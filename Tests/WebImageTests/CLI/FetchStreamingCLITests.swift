import Foundation
import TestSupport
import WebImage
import XCTest

/// `webimage fetch` over many distinct large images streams its outcomes: each is written and let go as it
/// completes, so the batch's peak RSS stays within the memory cache's limit plus the images in flight, far
/// below the sum of the images (300 images of 2000 × 2000 took 4.7 GB when every decoded image was kept to
/// the end). Lines still come in the order of the URLs, and files keep their names.
final class FetchStreamingCLITests: XCTestCase {
    /// The tool's resident baseline: the binary, the Swift runtime, libcurl, SQLite, the loopback transfers.
    static let baseline = 160 << 20

    func testABatchOfLargeImagesHoldsTheCachePlusWhatIsInFlight() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        let folder = try CLIProcess.temporaryFolder("fetch-stream")
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        // Given 60 distinct URLs of 2000 × 2000 JPEGs: 16 MB each decoded, 960 MB in all.
        let count = 60, side = 2000
        let jpeg = DecodeBombs.grayJPEG(width: side, height: side)
        let urls = (0..<count).map { index -> String in
            server.route("/img/\(index).jpg", .bytes(jpeg, contentType: "image/jpeg"))
            return server.url("/img/\(index).jpg").absoluteString
        }
        let image = side * side * 4
        let cacheLimit = 32 << 20, concurrency = 4
        let out = folder.appendingPathComponent("out")
        // When they are fetched in one run with a 32 MB memory cache.
        let run: WebImageCLI.MeasuredRun
        do {
            run = try WebImageCLI.runMeasured(["fetch"] + urls + ["--out", out.path, "--cache", folder.appendingPathComponent("cache").path,
                                                                  "--memory-cache", "\(cacheLimit)", "--concurrency", "\(concurrency)"],
                                              deadline: 300, rssCeiling: 3 << 30)
        } catch let notBuilt as WebImageCLI.NotBuilt {
            throw XCTSkip(notBuilt.description)
        }
        // Then every image is written, each line is in URL order, and the peak holds the cache, the images in
        // flight (each being decoded and then delivered: twice its size) and the baseline, not the batch.
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok  ") }
        XCTAssertEqual(lines.count, count)
        for (index, line) in lines.enumerated() {
            XCTAssertTrue(line.contains("/img/\(index).jpg "), "line \(index) out of order: \(line)")
            XCTAssertTrue(line.hasSuffix("/\(index).jpg"), "file of line \(index): \(line)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        XCTAssertEqual(Set(files), Set((0..<count).map { "\($0).jpg" }), "temporary files left or names changed")
        let bound = cacheLimit + 2 * concurrency * image + Self.baseline
        print(String(format: "ACCOUNTING fetch %d × %d² JPEG: %.0f MB peak RSS (bound %.0f MB, images %.0f MB)",
                     count, side, run.peakMB, Double(bound) / 1e6, Double(count * image) / 1e6))
        XCTAssertLessThan(bound, count * image / 2, "the bound must be well below the sum of the images")
        XCTAssertLessThanOrEqual(run.peakRSS, bound, "peak RSS over the memory cache + images in flight + baseline")
    }

    /// Duplicate names keep the numbering of the URL order (`a.jpg`, `a-2.jpg`, …) although the images finish in
    /// any order.
    func testNamesFollowTheOrderOfTheURLs() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        let folder = try CLIProcess.temporaryFolder("fetch-names")
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        let small = DecodeBombs.grayJPEG(width: 16, height: 8)
        let large = DecodeBombs.grayJPEG(width: 600, height: 400)
        // The first URL is slow and large: it finishes last.
        server.route("/a/photo.jpg", .drip(large, chunk: max(1, large.count / 4), interval: 0.2))
        server.route("/b/photo.jpg", .bytes(small, contentType: "image/jpeg"))
        server.route("/c/photo.jpg", .bytes(small, contentType: "image/jpeg"))
        let out = folder.appendingPathComponent("out")
        let run = try CLIProcess.run(["fetch", server.url("/a/photo.jpg").absoluteString, server.url("/b/photo.jpg").absoluteString,
                                      server.url("/c/photo.jpg").absoluteString, "--out", out.path,
                                      "--cache", folder.appendingPathComponent("cache").path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let first = try ImageDecoder.info(try Data(contentsOf: out.appendingPathComponent("photo.jpg")))
        XCTAssertEqual(first.width, 600, "the first URL's image has the first name")
        XCTAssertEqual(try ImageDecoder.info(try Data(contentsOf: out.appendingPathComponent("photo-3.jpg"))).width, 16)
        let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok  ") }
        XCTAssertEqual(lines.map { $0.contains("/a/photo.jpg") }, [true, false, false])
    }
}
