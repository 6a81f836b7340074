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
}
