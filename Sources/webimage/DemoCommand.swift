import ArgumentParser
import Foundation
import WebImage

/// `webimage demo`: the main job on its built-in default.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run WebImage's demonstration on its built-in default.",
        discussion: """
        Example:
          webimage demo
        """
    )

    func run() throws {
        print("WebImage \(WebImageModule.version): the demo grows with the pipeline; see README.md.")
    }
}
