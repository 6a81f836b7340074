import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Terminal facts and formatting shared by the commands.
enum Terminal {
    /// Whether standard output is a terminal (then progress bars redraw in place; otherwise plain lines).
    static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Writes `text` to standard error with a newline.
    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `1.2 MB`, `340 KB`, `512 B` (powers of 1024).
    static func bytes(_ count: Int64) -> String {
        let value = Double(count)
        if value >= 1024 * 1024 * 1024 { return String(format: "%.2f GB", value / (1024 * 1024 * 1024)) }
        if value >= 1024 * 1024 { return String(format: "%.1f MB", value / (1024 * 1024)) }
        if value >= 1024 { return String(format: "%.1f KB", value / 1024) }
        return "\(count) B"
    }

    /// `1.23 s` or `45.6 ms` or `789 µs`.
    static func duration(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.1f ms", seconds * 1000) }
        return String(format: "%.0f µs", seconds * 1_000_000)
    }

    /// The value at percentile `p` (0…100) of `values` (nearest rank); 0 for none.
    static func percentile(_ p: Double, of values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
