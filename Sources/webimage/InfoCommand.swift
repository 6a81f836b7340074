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
          {"path":"photo.jpg","format":"jpeg","bytes":183220,"width":1920,"height":1080,"frames":1,
           "loop_count":null,"plays":1,"durations":[0.0],"has_alpha":false,"progressive":false,
           "exif_orientation":6}

        loop_count is the value stored in the file (null when absent; GIF counts repeats, APNG and WebP
        total plays); plays is the total number of plays (0 = forever).
        """
    )

    @Argument(help: "Image files to inspect.")
    var files: [String]

    func run() throws {
        var failed = false
        for path in files {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                failed = true
                FileHandle.standardError.write(Data("webimage info: \(path): cannot read: \(error.localizedDescription)\n".utf8))
                continue
            }
            do {
                print(try InfoReport.json(path: path, data: data))
            } catch {
                failed = true
                FileHandle.standardError.write(Data("webimage info: \(path): \(error)\n".utf8))
            }
        }
        if failed { throw ExitCode(1) }
    }
}
