import Fetcher
import Foundation
import XCTest

/// The one line per hostile case the suite prints, for the README's "Hostile sources" table:
/// `HOSTILE | case | error | time | peak RSS`.
enum HostileReport {
    static func line(_ name: String, outcome: String, seconds: Double, peakRSS: Int? = nil) {
        let rss = peakRSS.map { String(format: "%.0f MB", Double($0) / 1_048_576) } ?? "–"
        print("HOSTILE | \(name) | \(outcome) | \(String(format: "%.2f s", seconds)) | \(rss)")
    }
}

extension XCTestCase {
    /// Fetches `request`, checks it took at most `bound` seconds, prints the case's report line and returns
    /// the events.
    func fetchHostile(_ name: String, _ request: FetchRequest, on queue: FetchQueue, bound: Double,
                      file: StaticString = #filePath, line: UInt = #line) -> FetchRecorder.Events {
        let start = ContinuousClock.now
        let events = fetchAndWait(request, on: queue, timeout: bound + 10, file: file, line: line)
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        XCTAssertLessThanOrEqual(seconds, bound, "\(name) took \(seconds) s", file: file, line: line)
        HostileReport.line(name, outcome: events.error.map { "\($0)" } ?? "ok", seconds: seconds)
        return events
    }
}
