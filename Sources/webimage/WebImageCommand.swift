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
          webimage demo
        """,
        subcommands: [InfoCommand.self, DemoCommand.self]
    )
}
