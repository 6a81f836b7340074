import Foundation

/// The AVIF, HEIC and JPEG XL files of `corpus/modern/` and their `MANIFEST.tsv` (expected ok/reject, size and
/// frames as Debian 12's libavif 0.11, libheif 1.15 and libjxl 0.7 read them).
public enum ModernCorpus {
    /// One row of `modern/MANIFEST.tsv`.
    public struct Entry: Sendable, CustomStringConvertible {
        /// Relative to `modern/`, e.g. `avif/libavif__white_1x1.avif`.
        public let path: String
        public let url: URL
        /// `avif`, `heic` or `jxl`.
        public let format: String
        /// Whether an SDK with default limits must decode it (`ok`) or give a typed error (`reject`).
        public let isExpectedOK: Bool
        /// Size and frames (0 = not parsed).
        public let width: Int, height: Int, frames: Int
        public let notes: String
        public var description: String { path }
    }

    /// The rows for `format` (`avif`, `heic`, `jxl`); throws `Corpus.Missing` without the corpus.
    public static func entries(format: String) throws -> [Entry] {
        let dir = try Corpus.require().appendingPathComponent("modern")
        let text = try String(contentsOf: dir.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        var rows: [Entry] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 10, f[4] == format else { continue }
            rows.append(Entry(path: f[0], url: dir.appendingPathComponent(f[0]), format: f[4], isExpectedOK: f[5] == "ok",
                              width: Int(f[6]) ?? 0, height: Int(f[7]) ?? 0, frames: Int(f[8]) ?? 0,
                              notes: f.count > 10 ? f[10] : ""))
        }
        return rows
    }

    /// No row of the manifest ends with the name asked for.
    public struct NotListed: Error, CustomStringConvertible {
        public let description: String
    }

    /// The file of `format` whose path ends with `suffix`; throws `Corpus.Missing` without the corpus.
    public static func url(format: String, endingWith suffix: String) throws -> URL {
        guard let entry = try entries(format: format).first(where: { $0.path.hasSuffix(suffix) }) else {
            throw NotListed(description: "no \(format) file ending with \(suffix) in modern/MANIFEST.tsv")
        }
        return entry.url
    }
}
