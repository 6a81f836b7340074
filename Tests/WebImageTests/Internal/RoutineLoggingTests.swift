import Foundation
import Logging
import Synchronization
import TestSupport
import WebImage
import XCTest

/// A library logs at debug what the application did not ask about: a 404, an error page, a prefetch of a
/// missing image are answers to the caller (its completion has them), not news for the operator's stderr.
final class RoutineLoggingTests: XCTestCase {
    private final class Lines: Sendable {
        let all = Mutex<[(Logger.Level, String)]>([])
    }

    private struct Capture: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            lines.all.withLock { $0.append((level, "\(message)")) }
        }
    }

    func testRoutineFailuresLogNothingAtInfoOrAbove() throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let lines = Lines()
        let previous = WebImageLog.logger
        WebImageLog.logger = Logger(label: "test") { _ in Capture(lines: lines) }
        defer { WebImageLog.logger = previous }
        fixture.server.route("/missing.png", .status(404))
        fixture.server.route("/page", .bytes(Data("<html>".utf8), contentType: "text/html"))
        XCTAssertNotNil(fixture.load(fixture.server.url("/missing.png")).error)
        XCTAssertNotNil(fixture.load(fixture.server.url("/page")).error)
        let loud = lines.all.withLock { $0.filter { $0.0 >= .info } }
        XCTAssertTrue(loud.isEmpty, "\(loud)")
        XCTAssertFalse(lines.all.withLock { $0.isEmpty }, "the failures are still logged, at debug")
    }
}
