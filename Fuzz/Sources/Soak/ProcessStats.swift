import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Memory and descriptor figures of this process, from /proc (a read failure is printed).
enum ProcessStats {
    /// Resident set size in KiB (`VmRSS` in /proc/self/status), after returning free heap to the system
    /// (`malloc_trim`), so the figure is memory in use rather than allocator slack.
    static func residentKiB() -> Int {
        _ = glibcMallocTrim(0)
        let status: String
        do {
            status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        } catch {
            say("soak: cannot read /proc/self/status: \(error)")
            return -1
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return -1
    }

    /// Open file descriptors (entries of /proc/self/fd, not counting the one the listing itself uses).
    static func openDescriptors() -> Int {
        descriptorTargets().count
    }

    /// What each open descriptor points at, by number (for the leak report). The descriptor the listing
    /// itself uses is left out.
    static func descriptorTargets() -> [String: String] {
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        } catch {
            say("soak: cannot list /proc/self/fd: \(error)")
            return [:]
        }
        var targets: [String: String] = [:]
        for entry in entries {
            do {
                targets[entry] = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)
            } catch {
                continue // the listing's own descriptor, closed by now
            }
        }
        return targets
    }
}

/// glibc's `malloc_trim` (a GNU extension the Glibc module does not import).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

/// Writes a line to standard output at once (unbuffered, so progress shows up as it happens in a log file).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
