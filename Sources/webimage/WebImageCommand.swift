import ArgumentParser
import WebImage
import WebImageAVIF
import WebImageJXL
import WebImageHEIF

/// The `webimage` command-line tool.
@main
struct WebImageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, inspect, convert and cache images with WebImage.",
        discussion: """
        Examples:
          webimage info photo.jpg anim.gif
          webimage convert anim.gif anim.webp
          webimage demo
          webimage fetch https://example.com/a.jpg --out images
          webimage cache stats
        """,
        subcommands: [InfoCommand.self, ConvertCommand.self, DemoCommand.self, FetchCommand.self, CacheCommand.self, BenchChartCommand.self]
    )

    /// Registers the optional codec modules (AVIF, HEIC, JPEG XL), then runs the command line.
    static func main() {
        CodecModules.registerAll()
        main(nil)
    }
}

/// The optional codec modules the tool is built with.
enum CodecModules {
    static func registerAll() {
        AVIFCodec.register()
        JXLCodec.register()
        HEIFCodec.register()
    }
}
