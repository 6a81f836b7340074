import Foundation
import WebImage
import XCTest

final class BenchChartCLITests: XCTestCase {
    /// `webimage bench-chart` turns bench-results.json into a PNG with one bar row per comparison.
    func testChartIsAPNGSizedByItsRows() throws {
        let folder = try CLIProcess.temporaryFolder("bench-chart")
        let json = folder.appendingPathComponent("bench-results.json")
        let rows = (0..<6).map { i in
            """
            {"suite":"s","name":"case \(i)","unit":"ms","ours":\(Double(i + 1)),"peer":2.0,"peerName":"p","higherIsBetter":false,"goal":null,"goalMet":\(i % 2 == 0)}
            """
        }
        try ("[" + rows.joined(separator: ",") + ",{\"suite\":\"s\",\"name\":\"no peer\",\"unit\":\"ms\",\"ours\":1,\"higherIsBetter\":false}]")
            .write(to: json, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("chart.png")
        let run = try CLIProcess.run(["bench-chart", json.path, "--output", output.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("6 comparisons"), run.stdout)
        let image = try ImageDecoder.decode(try Data(contentsOf: output))
        XCTAssertEqual(image.format, .png)
        XCTAssertGreaterThan(image.width, 600)
        XCTAssertGreaterThan(image.height, 6 * 20)

        let empty = folder.appendingPathComponent("empty.json")
        try "[]".write(to: empty, atomically: true, encoding: .utf8)
        XCTAssertNotEqual(try CLIProcess.run(["bench-chart", empty.path, "--output", output.path]).status, 0)
    }

    /// `--suite` draws that suite's rows only, as pairs of bars (ours, the peer's), ours red where the goal was
    /// missed; a row's text running past the right edge is clipped (it used to trap in `Canvas.fill`).
    func testSuiteChartDrawsThatSuiteAsPairsOfBars() throws {
        let folder = try CLIProcess.temporaryFolder("bench-chart-suite")
        let json = folder.appendingPathComponent("bench-results.json")
        let longPeer = String(repeating: "a peer with a very long name ", count: 6)
        try """
        [{"suite":"other","name":"x","unit":"ms","ours":1,"peer":2,"peerName":"p","higherIsBetter":false},
         {"suite":"service","name":"cold req/s","unit":"req/s","ours":200,"peer":100,"peerName":"thumbor","higherIsBetter":true,"goal":"≥ 3×","goalMet":false},
         {"suite":"service","name":"cold p99","unit":"ms","ours":50,"peer":500,"peerName":"thumbor","higherIsBetter":false,"goalMet":true},
         {"suite":"service","name":"cpu","unit":"ms","ours":5,"peer":30,"peerName":"\(longPeer)","higherIsBetter":false}]
        """.write(to: json, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("service.png")
        let run = try CLIProcess.run(["bench-chart", json.path, "--suite", "service", "--output", output.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("3 comparisons"), run.stdout)
        let image = try ImageDecoder.decode(try Data(contentsOf: output))
        let pixels = image.firstFrame.buffer.converted(to: .rgba8).packedBytes
        var colours = Set<[UInt8]>()
        for i in stride(from: 0, to: pixels.count, by: 4) { colours.insert(Array(pixels[i ..< i + 3])) }
        XCTAssertTrue(colours.contains([210, 70, 60]), "the missed goal's bar is red")
        XCTAssertTrue(colours.contains([60, 110, 200]), "the other bars of ours are blue")
        XCTAssertTrue(colours.contains([170, 170, 175]), "the peer's bars are grey")

        let none = try CLIProcess.run(["bench-chart", json.path, "--suite", "absent", "--output", output.path])
        XCTAssertNotEqual(none.status, 0)
    }
}
