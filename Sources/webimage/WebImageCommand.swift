import ArgumentParser

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
}
