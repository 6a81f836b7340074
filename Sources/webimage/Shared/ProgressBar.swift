import Foundation

/// A progress bar on standard output: redrawn in place on a terminal (at most every 50 ms), a few plain
/// lines otherwise (at each quarter), so logs and pipes stay readable.
///
/// ```
/// cold  [##############..........]  34/50  1.2 MB
/// ```
///
/// - Important: Thread-safe: `advance` may be called from any thread.
final class ProgressBar: Sendable {
    private let title: String
    private let total: Int
    private let interactive: Bool
    private let state = Mutex(State())

    private struct State {
        var done = 0
        var bytes: Int64 = 0
        var lastDraw = 0.0
        var lastQuarter = 0
    }

    /// A bar for `total` steps titled `title`; `interactive` defaults to whether stdout is a terminal.
    init(title: String, total: Int, interactive: Bool = Terminal.isInteractive) {
        self.title = title
        self.total = max(total, 1)
        self.interactive = interactive
    }

    /// Counts one finished step of `bytes` bytes.
    func advance(bytes: Int64 = 0) {
        let line: String? = state.withLock { state in
            state.done += 1
            state.bytes += bytes
            let now = ProcessInfo.processInfo.systemUptime
            if interactive {
                guard state.done == total || now - state.lastDraw >= 0.05 else { return nil }
                state.lastDraw = now
                return "\r" + render(done: state.done, bytes: state.bytes)
            }
            let quarter = state.done * 4 / total
            guard quarter > state.lastQuarter else { return nil }
            state.lastQuarter = quarter
            return render(done: state.done, bytes: state.bytes) + "\n"
        }
        if let line { write(line) }
    }

    /// Prints `line` on a line of its own: on a terminal the bar is cleared, and drawn again below the line.
    func printLine(_ line: String) {
        let text = state.withLock { state -> String in
            guard interactive else { return line + "\n" }
            return "\r\u{1B}[K" + line + "\n" + render(done: state.done, bytes: state.bytes)
        }
        write(text)
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if interactive { write("\n") }
    }

    private func render(done: Int, bytes: Int64) -> String {
        let width = 30
        let filled = min(width, done * width / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let count = String(repeating: " ", count: max(0, "\(total)".count - "\(done)".count)) + "\(done)/\(total)"
        return "\(title) [\(bar)] \(count)  \(Terminal.bytes(bytes))"
    }

    /// Through `print` and `fflush`, so the bar interleaves correctly with the command's other output.
    private func write(_ text: String) {
        print(text, terminator: "")
        fflush(nil) // every stream: `stdout` itself is a global Swift 6 cannot reference safely
    }
}
