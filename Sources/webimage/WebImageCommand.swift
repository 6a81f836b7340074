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
        """,
        subcommands: [InfoCommand.self, ConvertCommand.self, DemoCommand.self]
    )
}
