import ArgumentParser
import Foundation
import WebImage

/// `webimage cache trim`: evicts least recently used entries down to a count, a size, or an age.
struct CacheTrimCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trim",
        abstract: "Evict least recently used entries down to a count, a total size and/or a maximum age.",
        discussion: """
        Sizes take a K, M or G suffix (powers of 1024); ages an s, m, h or d suffix (seconds by default).

        Examples:
          webimage cache trim --count 1000
          webimage cache trim --size 200M --age 7d --path /tmp/cache
        """
    )

    @OptionGroup var cache: CachePathOption

    @Option(name: .long, help: "Keep at most this many entries.")
    var count: Int?

    @Option(name: .long, help: "Keep at most this many bytes (e.g. 500000, 200M).")
    var size: String?

    @Option(name: .long, help: "Remove entries not used for this long (e.g. 3600, 12h, 7d).")
    var age: String?

    func validate() throws {
        guard count != nil || size != nil || age != nil else { throw ValidationError("give --count, --size and/or --age") }
        if let count, count < 0 { throw ValidationError("--count must not be negative") }
        if let size, Self.bytes(size) == nil { throw ValidationError("--size: '\(size)' is not a size like 500000 or 200M") }
        if let age, Self.seconds(age) == nil { throw ValidationError("--age: '\(age)' is not an age like 3600 or 7d") }
    }

    func run() throws {
        let disk = try cache.openExisting()
        let before = try disk.usage()
        if let count { try disk.trim(toCount: count) }
        if let size, let bytes = Self.bytes(size) { try disk.trim(toCost: bytes) }
        if let age, let seconds = Self.seconds(age) { try disk.trim(toAge: seconds) }
        let after = try disk.usage()
        print("trimmed \(disk.path): \(before.entryCount) → \(after.entryCount) entries, "
              + "\(Terminal.bytes(before.totalBytes)) → \(Terminal.bytes(after.totalBytes))")
    }

    /// `500000`, `200K`, `200M`, `1G` in bytes; `nil` when malformed or overflowing.
    static func bytes(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let trimmed = text.uppercased().replacingOccurrences(of: "B", with: "")
        guard let last = trimmed.last else { return nil }
        let (digits, unit) = units[last].map { (String(trimmed.dropLast()), $0) } ?? (trimmed, 1)
        guard let value = Int64(digits), value >= 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    /// `3600`, `90s`, `30m`, `12h`, `7d` in seconds; `nil` when malformed.
    static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let last = text.lowercased().last else { return nil }
        let (digits, unit) = units[last].map { (String(text.dropLast()), $0) } ?? (text, 1)
        guard let value = Double(digits), value >= 0, value.isFinite else { return nil }
        return value * unit
    }
}
