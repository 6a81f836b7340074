import Foundation

/// Locates the third-party image corpus (`../shared/corpus` from the package root, or `$WEBIMAGE_CORPUS`)
/// and reads its `MANIFEST.tsv`.
///
/// Tests call `try Corpus.require()` and turn `Corpus.Missing` into an `XCTSkip` with its message: a user's
/// clone has no corpus.
public enum Corpus {
    /// Thrown when the corpus folder cannot be found.
    public struct Missing: Error, CustomStringConvertible {
        public let searched: [String]
        public var description: String {
            "image corpus not found (searched \(searched.joined(separator: ", "))); set WEBIMAGE_CORPUS to its folder"
        }
    }

    /// One row of `MANIFEST.tsv`.
    public struct Entry: Sendable {
        public let path: String
        public let url: URL
        public let format: String
        public let expected: String
        public let width: Int?
        public let height: Int?
        public let frameCount: Int?
        public let loopCount: Int?
        public let hasAlpha: Bool?
        public let isProgressiveOrInterlaced: Bool?
        public let exifOrientation: Int?
        public let refWarnings: Int?
        public let bytes: Int?
        public let notes: String
        /// Whether the reference library decoded it (`expected == "ok"`).
        public var isExpectedOK: Bool { expected == "ok" }
        /// Whether the manifest marks it as needing more than sane default limits (`HUGE`/`HEAVY`).
        public var isHuge: Bool { notes.contains("HUGE") }
    }

    /// The package root (the folder holding Package.swift), found from this source file's location.
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The corpus folder, or `nil` when absent.
    public static var directory: URL? {
        candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("MANIFEST.tsv").path) }
    }

    private static var candidates: [URL] {
        var list: [URL] = []
        if let env = ProcessInfo.processInfo.environment["WEBIMAGE_CORPUS"], !env.isEmpty {
            list.append(URL(fileURLWithPath: env))
        }
        list.append(packageRoot.appendingPathComponent("../shared/corpus").standardizedFileURL)
        list.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("../shared/corpus").standardizedFileURL)
        return list
    }

    /// The corpus folder; throws `Missing` when absent.
    public static func require() throws -> URL {
        guard let dir = directory else { throw Missing(searched: candidates.map(\.path)) }
        return dir
    }

    /// Every manifest row; throws `Missing` when the corpus is absent.
    public static func entries() throws -> [Entry] {
        let dir = try require()
        let text = try String(contentsOf: dir.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard !lines.isEmpty else { return [] }
        let header = lines.removeFirst().split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        func column(_ name: String) -> Int { header.firstIndex(of: name) ?? -1 }
        let c = (path: column("path"), format: column("format"), expected: column("expected"), width: column("width"),
                 height: column("height"), frames: column("frame_count"), loop: column("loop_count"),
                 alpha: column("has_alpha"), prog: column("is_progressive_or_interlaced"),
                 exif: column("exif_orientation"), warnings: column("ref_warnings"), bytes: column("bytes"),
                 notes: column("notes"))
        return lines.map { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func s(_ i: Int) -> String { i >= 0 && i < f.count ? f[i] : "" }
            func n(_ i: Int) -> Int? { Int(s(i)) }
            func b(_ i: Int) -> Bool? { n(i).map { $0 != 0 } }
            return Entry(path: s(c.path), url: dir.appendingPathComponent(s(c.path)), format: s(c.format),
                         expected: s(c.expected), width: n(c.width), height: n(c.height), frameCount: n(c.frames),
                         loopCount: n(c.loop), hasAlpha: b(c.alpha), isProgressiveOrInterlaced: b(c.prog),
                         exifOrientation: n(c.exif), refWarnings: n(c.warnings), bytes: n(c.bytes), notes: s(c.notes))
        }
    }
}
