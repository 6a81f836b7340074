import Fetcher
import Foundation
import TestSupport
import WebImage
import XCTest

/// The manager's transfer bounds and source policy reach every request it makes.
final class ImageManagerTransferLimitsTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    private func fetchError(_ outcome: PipelineFixture.Outcome, file: StaticString = #filePath,
                            line: UInt = #line) -> FetchError? {
        guard case .fetchFailed(let error)? = outcome.error else {
            XCTFail("expected a fetch error, got \(String(describing: outcome.error))", file: file, line: line)
            return nil
        }
        return error
    }

    func testDefaults() {
        let manager = fixture.manager
        XCTAssertEqual(manager.maximumResponseSize, FetchRequest.defaultMaximumResponseSize)
        XCTAssertEqual(manager.connectTimeout, 10)
        XCTAssertEqual(manager.maximumRedirects, 10)
        XCTAssertEqual(manager.sourcePolicy, .allowAll)
        XCTAssertTrue(manager.allowsFileURLs)
    }

    func testMaximumResponseSizeAndNoLimit() throws {
        let png = try TestImages.png(width: 200, height: 200)
        let url = fixture.serve("/a.png", png)
        fixture.manager.maximumResponseSize = Int64(png.count - 1)
        XCTAssertEqual(fetchError(fixture.load(url)), .responseTooLarge(limit: Int64(png.count - 1)))
        fixture.manager.maximumResponseSize = nil // no limit, asked explicitly
        XCTAssertEqual(fixture.load(url).image?.width, 200)
    }

    func testPublicOnlyRefusesTheLoopbackServerAndSendsNothing() throws {
        let url = fixture.serve("/b.png", try TestImages.png())
        fixture.manager.sourcePolicy = .publicOnly
        XCTAssertEqual(fetchError(fixture.load(url)), .addressRefused(address: "127.0.0.1", category: .loopback))
        XCTAssertEqual(fixture.server.totalRequestCount, 0)
        fixture.manager.sourcePolicy = .publicOnly(allowing: [IPNetwork("127.0.0.0/8")].compactMap { $0 })
        XCTAssertEqual(fixture.load(url).image?.width, 64, "the allow-list lets it through")
        XCTAssertEqual(fixture.server.totalRequestCount, 1)
    }

    func testFileURLsCanBeRefused() throws {
        let file = fixture.directory.appendingPathComponent("c.png")
        try TestImages.png().write(to: file)
        fixture.manager.allowsFileURLs = false
        XCTAssertEqual(fetchError(fixture.load(file)), .fileURLRefused(file))
        fixture.manager.allowsFileURLs = true
        XCTAssertEqual(fixture.load(file).image?.width, 64)
    }
}
