import Foundation
import TestSupport
import XCTest

/// Every ```swift block of README.md and of the guides in docs/ must appear in one of the snippet files of this
/// folder (`ReadmeSnippets.swift`, `DocsSnippets.swift`), which the compiler checks. Blocks holding
/// `.package(url:` (Package.swift lines for dependents) are not WebImage API and are exempt.
final class ReadmeSnippetsTests: XCTestCase {
    /// The guides the README links to; a guide removed or renamed must be removed here too.
    static let guides = ["getting-started.md", "colour.md", "caching-and-http.md", "service.md", "fleet.md",
                         "security-and-limits.md", "performance.md", "internals.md"]

    func testEveryReadmeSwiftBlockIsCompiled() throws {
        let root = Corpus.packageRoot
        let blocks = try Self.apiBlocks(in: root.appendingPathComponent("README.md"))
        XCTAssertGreaterThanOrEqual(blocks.count, 2)
        try Self.assertCompiled(blocks, file: "README.md", root: root)
    }

    func testEveryGuideSwiftBlockIsCompiled() throws {
        let root = Corpus.packageRoot
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        for guide in Self.guides { XCTAssertTrue(names.contains(guide), "docs/\(guide) is missing") }
        var total = 0
        for name in names {
            let blocks = try Self.apiBlocks(in: docs.appendingPathComponent(name))
            total += blocks.count
            try Self.assertCompiled(blocks, file: "docs/\(name)", root: root)
        }
        XCTAssertGreaterThanOrEqual(total, 15)
    }

    /// The README links every guide, and every guide exists.
    func testReadmeLinksEveryGuide() throws {
        let readme = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        for guide in Self.guides { XCTAssertTrue(readme.contains("(docs/\(guide)"), "README does not link docs/\(guide)") }
        XCTAssertTrue(readme.contains("make demo") && readme.contains("make test"))
    }

    static func normalized(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The ```swift blocks of a Markdown file, without those holding `.package(url:`.
    static func apiBlocks(in file: URL) throws -> [String] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.hasPrefix("```swift") { current = []; continue }
            if current != nil, line.hasPrefix("```") { blocks.append(current!.joined(separator: "\n")); current = nil; continue }
            current?.append(String(line))
        }
        XCTAssertNil(current, "\(file.lastPathComponent): a ```swift block is not closed")
        return blocks.filter { !$0.contains(".package(url:") }
    }

    /// The snippet files of Tests/WebImageTests/Docs, normalized and joined.
    static func compiledSource(root: URL) throws -> String {
        let folder = root.appendingPathComponent("Tests/WebImageTests/Docs")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix("Snippets.swift") }.sorted()
        XCTAssertTrue(files.contains("ReadmeSnippets.swift") && files.contains("DocsSnippets.swift"))
        return try files.map { normalized(try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)).joined(separator: "\n") }
            .joined(separator: "\n")
    }

    static func assertCompiled(_ blocks: [String], file: String, root: URL) throws {
        let compiled = try compiledSource(root: root)
        for block in blocks {
            let lines = normalized(block).joined(separator: "\n")
            XCTAssertTrue(compiled.contains(lines), "\(file): block not found in the snippet files:\n\(block)")
        }
    }
}
