import ArgumentParser
import Foundation
import WebImage

/// `webimage demo`: the main job on its built-in default (what `make demo` runs).
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve a built-in gallery on loopback and load it cold, warm from disk and warm from memory.",
        discussion: """
        Paints 44 pictures and encodes them with WebImage's own encoders (JPEG baseline and progressive, \
        PNG and interlaced PNG, GIF, APNG, WebP lossy, lossless and animated), serves them from an embedded \
        HTTP/1.1 server on 127.0.0.1, and loads the whole gallery through ImageManager three times: cold \
        (empty cache), warm disk (a new manager on the same cache folder) and warm memory (the same manager \
        again). Prints a table per phase, and writes webimage-demo.png (a labelled contact sheet) and \
        webimage-demo.gif (one animation of the gallery). Exits 1 if any image failed.

        Examples:
          webimage demo
          webimage demo --output /tmp/demo --cache /tmp/demo-cache
          swift run -c release webimage demo      (what `make demo` runs)
        """
    )

    @Option(name: .long, help: "Folder for webimage-demo.png and webimage-demo.gif (default: the current folder).")
    var output: String?

    @Option(name: .long, help: "Cache folder, emptied first (default: a new temporary folder).")
    var cache: String?

    @Option(name: .long, help: "Requests in flight at most.")
    var concurrency = 16

    func validate() throws {
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
    }

    func run() throws {
        PipelineLog.configure()
        let folder = URL(fileURLWithPath: output ?? FileManager.default.currentDirectoryPath, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CLIError.output(path: folder.path, reason: "\(error)")
        }
        let cachePath = cache ?? NSTemporaryDirectory() + "webimage-demo-\(UUID().uuidString.prefix(8))"
        let runner = DemoRunner(outputFolder: folder, cachePath: cachePath, concurrency: concurrency)
        let report = try runner.run()
        print("Contact sheet: \(report.contactSheet.path)")
        if let animation = report.animation { print("Animation:     \(animation.path)") }
        print("Cache:         \(cachePath)" + (cache == nil ? " (temporary; `webimage cache stats --path \(cachePath)`)" : ""))
        guard report.failures.isEmpty else {
            Terminal.printError("\(report.failures.count) image load(s) failed:")
            for failure in report.failures { Terminal.printError("  [\(failure.phase)] \(failure.label): \(failure.reason)") }
            throw ExitCode(1)
        }
    }
}
