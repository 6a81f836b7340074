import ArgumentParser
import Foundation
import WebImage

/// `webimage info FILE…`: one JSON object per line per file.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print format and size facts of image files, one JSON object per line.",
        discussion: """
        A file that cannot be read or decoded is reported on stderr; the others are still printed, and the
        exit status is 1.

        Example:
          webimage info photo.jpg anim.gif
          {"path":"photo.jpg","format":"jpeg","width":1920,"height":1080,...}
        """
    )

    @Argument(help: "Image files to inspect.")
    var files: [String]

    func run() throws {
        var failed = false
        for path in files {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                print(try InfoReport.json(path: path, data: data))
            } catch {
                failed = true
                FileHandle.standardError.write(Data("webimage info: \(path): \(error)\n".utf8))
            }
        }
        if failed { throw ExitCode(1) }
    }
}
