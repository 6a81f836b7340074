import Foundation
import WebImage

/// What `webimage fetch` reports as its URLs complete: each outcome is handled at once (its image written
/// under a temporary name, then let go), and its line printed in the order of the URLs as soon as every URL
/// before it is done. Only lines (and temporary file names) wait for their turn, never decoded images, so a
/// batch of any length holds no more than the images in flight. Files get their final names in URL order too,
/// so names are the same whatever order the images finish in.
///
/// - Important: Thread-safe; `complete` is called once per URL index, one call at a time (`BatchLoader.stream`).
final class FetchReport: Sendable {
    /// One finished URL waiting for its turn to be printed.
    private struct Finished {
        var url: URL
        var line: String?
        var bytes: Int64 = 0
        /// Written under a temporary name, and the extension of its final name.
        var pending: (file: URL, fileExtension: String)?
        var failure: String?
    }

    private struct State {
        var writer: FetchOutputWriter?
        var next = 0
        var waiting: [Int: Finished] = [:]
        var failures: [(String, String)]
        var bytes: Int64 = 0
    }

    private let state: Mutex<State>
    private let bar: ProgressBar

    /// A report writing with `writer` (nothing when `nil`), starting with `failures` (arguments that are not URLs).
    init(writer: FetchOutputWriter?, failures: [(String, String)], bar: ProgressBar) {
        state = Mutex(State(writer: writer, failures: failures))
        self.bar = bar
    }

    /// Handles the outcome of the `index`-th URL, then prints every line whose turn has come.
    func complete(_ index: Int, _ outcome: LoadOutcome) {
        var finished = Finished(url: outcome.url)
        if let image = outcome.image, outcome.isSuccess {
            var line = "ok  \(outcome.url.absoluteString)  \(image.format) \(image.width)x\(image.height)"
            if image.frameCount > 1 { line += " \(image.frameCount) frames" }
            line += "  \(Terminal.bytes(outcome.bytes))  \(DemoPhase.name(of: outcome.source))  \(Terminal.duration(outcome.seconds))"
            finished.line = line
            finished.bytes = outcome.bytes
            if let writer = state.withLock({ $0.writer }) {
                do { finished.pending = try writer.writePending(image, index: index) } catch {
                    finished.failure = "loaded but not written: \(error)"
                }
            }
        } else {
            finished.failure = outcome.failureReason
        }
        let lines = state.withLock { s -> [String] in
            s.waiting[index] = finished
            return _printable(&s)
        }
        for line in lines { bar.printLine(line) }
    }

    /// The bytes of the images loaded, and every failure in the order of the URLs.
    var summary: (bytes: Int64, failures: [(String, String)]) {
        state.withLock { ($0.bytes, $0.failures) }
    }

    /// Takes the lines whose turn has come, naming their files (lock held).
    private func _printable(_ s: inout State) -> [String] {
        var lines: [String] = []
        while let finished = s.waiting.removeValue(forKey: s.next) {
            s.next += 1
            let url = finished.url.absoluteString
            if finished.line != nil { s.bytes += finished.bytes }
            if let failure = finished.failure {
                s.failures.append((url, failure))
                continue
            }
            guard var line = finished.line else { continue }
            if let pending = finished.pending, s.writer != nil {
                do {
                    let file = try s.writer!.place(pending.file, fileExtension: pending.fileExtension, for: finished.url)
                    line += "  → \(file.path)"
                } catch {
                    s.failures.append((url, "loaded but not written: \(error)"))
                    continue
                }
            }
            lines.append(line)
        }
        return lines
    }
}
