import ArgumentParser
import Dispatch
import Foundation
import WebImage

/// `webimage cache verify`: the manifest (`PRAGMA quick_check`), the manifest against the files, and a
/// re-decode of every entry.
struct CacheVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a cache: SQLite quick_check, manifest vs files, and re-decode every entry.",
        discussion: """
        Reports each bad entry (missing file, wrong size, bytes that do not decode) and exits 1 if any \
        is found. Repairs nothing: `webimage cache clear` or the next ImageCache read of a bad entry does.

        Example:
          webimage cache verify --path /tmp/cache
        """
    )

    @OptionGroup var cache: CachePathOption

    func run() throws {
        let disk = try cache.openExisting()
        let report = try disk.verify()
        print("path:        \(disk.path)")
        print("entries:     \(report.usage.entryCount) (\(report.usage.inlineCount) inline, \(report.usage.fileCount) files), "
              + Terminal.bytes(report.usage.totalBytes))
        print("quick_check: \(report.quickCheck.joined(separator: "; "))")
        var problems = report.quickCheck == ["ok"] ? 0 : 1
        for key in report.missingFiles { Terminal.printError("BAD  \(key): file missing"); problems += 1 }
        for key in report.sizeMismatches { Terminal.printError("BAD  \(key): file size differs from the manifest"); problems += 1 }
        if !report.unreferencedFiles.isEmpty {
            print("note:        \(report.unreferencedFiles.count) unreferenced file(s) in data/ (removed at the next exclusive open)")
        }
        let badDecodes = try decodeAll(disk, skipping: Set(report.missingFiles + report.sizeMismatches))
        for (key, reason) in badDecodes { Terminal.printError("BAD  \(key): \(reason)") }
        problems += badDecodes.count
        print("decoded:     \(report.usage.entryCount - badDecodes.count) of \(report.usage.entryCount) entries")
        guard problems == 0 else {
            print("verify: \(problems) problem(s) found")
            throw ExitCode(1)
        }
        print("verify: ok")
    }

    /// Decodes every entry (all frames), in parallel; returns the keys that failed and why, in key order.
    private func decodeAll(_ disk: DiskCache, skipping skipped: Set<String>) throws -> [(String, String)] {
        let keys = try disk.allKeys().filter { !skipped.contains($0) }
        let bar = ProgressBar(title: "decode", total: keys.count)
        let failures = Mutex<[(String, String)]>([])
        DispatchQueue.concurrentPerform(iterations: keys.count) { index in
            let key = keys[index]
            let reason: String?
            do {
                if let item = try disk.entry(forKey: key) {
                    let image = try ImageDecoder.decode(item.value, options: DecodeOptions(preloadAllFrames: true))
                    reason = image.width > 0 && image.height > 0 ? nil : "decoded to an empty image"
                } else {
                    reason = nil // removed meanwhile (another process): nothing to check
                }
            } catch {
                reason = "\(error)"
            }
            if let reason { failures.withLock { $0.append((key, reason)) } }
            bar.advance()
        }
        bar.finish()
        return failures.withLock { $0 }.sorted { $0.0 < $1.0 }
    }
}
