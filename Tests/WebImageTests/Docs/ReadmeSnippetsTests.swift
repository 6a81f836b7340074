import Foundation
import TestSupport
import XCTest

/// Every ```swift block of README.md must appear in ReadmeSnippets.swift (which the compiler checks).
final class ReadmeSnippetsTests: XCTestCase {
    func testEveryReadmeSwiftBlockIsCompiled() throws {
        let root = Corpus.packageRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: root.appendingPathComponent("Tests/WebImageTests/Docs/ReadmeSnippets.swift"), encoding: .utf8)
        func normalized(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let compiled = normalized(source).joined(separator: "\n")
        var blocks: [String] = []
        var current: [String]?
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.hasPrefix("```swift") { current = []; continue }
            if current != nil, line.hasPrefix("```") { blocks.append(current!.joined(separator: "\n")); current = nil; continue }
            current?.append(String(line))
        }
        // The Package.swift lines for dependents are not WebImage API.
        let apiBlocks = blocks.filter { !$0.contains(".package(url:") }
        XCTAssertGreaterThanOrEqual(apiBlocks.count, 8)
        for block in apiBlocks {
            let lines = normalized(block).joined(separator: "\n")
            XCTAssertTrue(compiled.contains(lines), "README block not found in ReadmeSnippets.swift:\n\(block)")
        }
    }
}
