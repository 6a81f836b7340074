import Foundation
import TestSupport
import XCTest

/// Every flag `webimage-server --help` lists has a row in docs/service.md's "Flags" table, and every flag the table
/// names exists: a review found five real flags missing from the table (`--host`, `--thumbor-key`,
/// `--default-quality`, `--log-level`, `--no-result-cache`) and a default that was wrong.
final class ServerFlagsDocumentedTests: XCTestCase {
    func testEveryServerFlagHasARowAndEveryRowAFlag() throws {
        let binary = ImageServerShutdownTests.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) not built; run `swift build` first")
        }
        let help = try Self.output(of: binary, arguments: ["--help"])
        let flags = Self.flags(inHelp: help).subtracting(["--help"])
        XCTAssertGreaterThan(flags.count, 20, "the help lists the server's options:\n\(help)")

        let guide = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("docs/service.md"), encoding: .utf8)
        let table = try XCTUnwrap(Self.section("## Flags", of: guide), "docs/service.md has a Flags section")
        let rows = Self.flags(inTable: table)
        XCTAssertEqual(flags.subtracting(rows).sorted(), [], "flags of `webimage-server --help` without a row in docs/service.md")
        XCTAssertEqual(rows.subtracting(flags).sorted(), [], "rows of docs/service.md's Flags table naming no flag of the server")
    }

    /// `--name` at the start of an option line of the help (argument-parser indents them by two spaces: "  --port
    /// <port>  Port to listen on…", "  -h, --help"; a wrapped description's lines are indented further).
    static func flags(inHelp help: String) -> Set<String> {
        var flags = Set<String>()
        for line in help.split(separator: "\n") where line.hasPrefix("  -") {
            let names = line.dropFirst(2)
            let long = names.hasPrefix("--") ? names : names.drop(while: { $0 != " " }).dropFirst()
            if let flag = leadingFlag(long) { flags.insert(flag) }
        }
        return flags
    }

    /// The flag each table row starts with: "| `--port` | …" or "| `--preset NAME=OPTIONS` | …".
    static func flags(inTable table: String) -> Set<String> {
        var flags = Set<String>()
        for line in table.split(separator: "\n") where line.hasPrefix("| `--") {
            if let flag = leadingFlag(line.dropFirst(3)) { flags.insert(flag) }
        }
        return flags
    }

    /// `--` and the name's letters, digits and dashes at the start of `text`, or nil.
    static func leadingFlag(_ text: Substring) -> String? {
        guard text.hasPrefix("--") else { return nil }
        let name = text.dropFirst(2).prefix { $0.isLetter || $0.isNumber || $0 == "-" }
        return name.isEmpty ? nil : "--" + name
    }

    /// The lines after `heading` up to the next heading of the same level.
    static func section(_ heading: String, of markdown: String) -> String? {
        guard let start = markdown.range(of: "\n" + heading + "\n") else { return nil }
        let rest = markdown[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    static func output(of binary: URL, arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(binary.lastPathComponent) \(arguments.joined(separator: " "))")
        return String(decoding: data, as: UTF8.self)
    }
}
