import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// glibc's `mallopt` (malloc.h is not in Swift's Glibc module).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32

/// This process's resident memory as the kernel counts it, for accounting tests that compare what a budget
/// counted with what is really held: the current resident set (`/proc/self/statm`) and its peak since the last
/// `resetPeak()` (`VmHWM` of `/proc/self/status`, reset by writing 5 to `/proc/self/clear_refs`).
///
/// - Important: Thread-safe (each call reads the kernel's files); the peak is the whole process's, so measure
///   with nothing else running in the process.
public enum ResidentMemory {
    /// Fixes glibc's mmap threshold at 1 MiB: every block of 1 MiB or more is mapped when allocated and unmapped when
    /// freed, so each decode's peak is its own. (glibc's sliding threshold otherwise serves a later decode from memory
    /// an earlier one freed, and its growth reads near 0: which test ran before decided whether a growth showed.)
    /// Process-wide and lasting; harmless for other tests.
    public static func mapLargeBlocks() {
        _ = glibcMallopt(-3, 1 << 20)  // M_MMAP_THRESHOLD
    }

    /// Bytes resident now (`/proc/self/statm`'s second field × the page size), 0 when unreadable.
    public static var current: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The most bytes resident since the last `resetPeak()` (or the process's start), 0 when unreadable.
    public static var peak: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 1 ? (Int(fields[1]) ?? 0) * 1024 : 0
        }
        return 0
    }

    /// Resets the peak to the current resident set. Returns `false` where the kernel does not allow it (then
    /// a test should skip: its peak would include everything before).
    @discardableResult
    public static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() } // best effort: a procfs handle
        do { try handle.write(contentsOf: Data("5".utf8)) } catch { return false }
        return true
    }

    /// Runs `body` and returns its result with the most bytes that became resident while it ran (the peak
    /// during `body` minus the resident set before it), or `nil` for the bytes when the peak cannot be reset.
    public static func measuringPeakGrowth<T>(_ body: () throws -> T) rethrows -> (value: T, growth: Int?) {
        let reset = resetPeak()
        let before = current
        let value = try body()
        return (value, reset ? max(0, peak - before) : nil)
    }
}
