import Foundation
import TestSupport
import XCTest

/// Runs the built `webimage` binary through `WebImageCLI`; skips when it is not built.
struct CLIProcess {
    typealias Run = WebImageCLI.Run

    static func run(_ arguments: [String]) throws -> Run {
        do { return try WebImageCLI.run(arguments) } catch let notBuilt as WebImageCLI.NotBuilt {
            throw XCTSkip(notBuilt.description)
        }
    }

    /// A new empty folder under the temporary directory; removed by the caller.
    static func temporaryFolder(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cli-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
