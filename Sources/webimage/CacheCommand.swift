import ArgumentParser
import Foundation
import WebImage

/// `webimage cache stats|verify|trim|clear`: maintenance of an image cache folder.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect, check, trim or empty an image cache folder.",
        discussion: """
        Works on the disk cache of an ImageCache (by default \(ImageCache.defaultPath())).

        Examples:
          webimage cache stats
          webimage cache verify --path /tmp/cache
          webimage cache trim --size 200M --age 7d
          webimage cache clear --path /tmp/cache
        """,
        subcommands: [CacheStatsCommand.self, CacheVerifyCommand.self, CacheTrimCommand.self, CacheClearCommand.self]
    )
}

/// The `--path` option every cache subcommand takes.
struct CachePathOption: ParsableArguments {
    @Option(name: .long, help: "The cache folder (default: \(ImageCache.defaultPath())).")
    var path: String?

    var resolved: String { path ?? ImageCache.defaultPath() }

    /// Opens the disk cache, refusing a folder that holds no cache (opening would create one).
    func openExisting() throws -> DiskCache {
        let manifest = resolved + "/manifest.sqlite"
        guard FileManager.default.fileExists(atPath: manifest) else {
            throw CLIError.usage("no cache at \(resolved) (no manifest.sqlite)")
        }
        return try DiskCache(path: resolved)
    }
}

/// `webimage cache stats`.
struct CacheStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the entry count and size of a cache, inline (SQLite) and in files.",
        discussion: """
        Example:
          webimage cache stats --path /tmp/cache
        """
    )

    @OptionGroup var cache: CachePathOption

    func run() throws {
        let disk = try cache.openExisting()
        let usage = try disk.usage()
        print("path:          \(disk.path)")
        print("entries:       \(usage.entryCount)")
        print("total size:    \(Terminal.bytes(usage.totalBytes)) (\(usage.totalBytes) bytes)")
        print("inline:        \(usage.inlineCount) entries, \(Terminal.bytes(usage.inlineBytes)) (values ≤ \(Terminal.bytes(Int64(disk.inlineThreshold))) in manifest.sqlite)")
        print("files:         \(usage.fileCount) entries, \(Terminal.bytes(usage.fileBytes)) (in data/)")
        if let oldest = usage.oldestAccess, let newest = usage.newestAccess {
            let formatter = ISO8601DateFormatter()
            print("last accesses: \(formatter.string(from: oldest)) … \(formatter.string(from: newest))")
        }
        if let recovery = disk.recoveryError { print("recovered at open: \(recovery)") }
    }
}

/// `webimage cache clear`.
struct CacheClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every entry of a cache.",
        discussion: """
        Example:
          webimage cache clear --path /tmp/cache
        """
    )

    @OptionGroup var cache: CachePathOption

    func run() throws {
        let disk = try cache.openExisting()
        let before = try disk.usage()
        try disk.removeAllObjects()
        print("removed \(before.entryCount) entries (\(Terminal.bytes(before.totalBytes))) from \(disk.path)")
    }
}
