import Foundation
import TestSupport
import XCTest

/// A newcomer's package: depends on this checkout's `WebImage` product with `traits: []`, as the README says,
/// and is resolved and built from scratch by SwiftPM in a folder of its own. It must resolve swift-log and
/// nothing else (it resolved 26 packages: Hummingbird, swift-nio, swift-crypto, …) and build with no warning
/// (pkg-config's `-DAVIF_DLL` and `-DHWY_SHARED_DEFINE` were printed as "prohibited flags" on every build).
final class MinimalClientTests: XCTestCase {
    private struct Run {
        var status: Int32
        var output: String
        var seconds: Double
    }

    private func swift(_ arguments: [String], in directory: URL) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift"] + arguments
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let start = Date()
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self),
                   seconds: Date().timeIntervalSince(start))
    }

    func testAClientOfWebImageResolvesSwiftLogOnlyAndBuildsWithoutWarnings() throws {
        let client = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: client) }
        try FileManager.default.createDirectory(at: client.appendingPathComponent("Sources/Feed"), withIntermediateDirectories: true)
        let manifest = """
        // swift-tools-version:6.1
        import PackageDescription
        let package = Package(
            name: "Feed",
            dependencies: [.package(path: "\(Corpus.packageRoot.path)", traits: [])],
            targets: [.executableTarget(name: "Feed", dependencies: [.product(name: "WebImage", package: "\(Corpus.packageRoot.lastPathComponent)")])]
        )
        """
        try manifest.write(to: client.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try """
        import Foundation
        import WebImage
        let manager = ImageManager(cache: nil)
        manager.loadImage(url: URL(string: "data:,x")!) { result in print(result) }
        """.write(to: client.appendingPathComponent("Sources/Feed/main.swift"), atomically: true, encoding: .utf8)

        let resolve = try swift(["package", "resolve"], in: client)
        XCTAssertEqual(resolve.status, 0, resolve.output)
        let checkouts = try FileManager.default.contentsOfDirectory(atPath: client.appendingPathComponent(".build/checkouts").path)
        XCTAssertEqual(checkouts.sorted(), ["swift-log"], "packages resolved besides WebImage")

        let build = try swift(["build"], in: client)
        XCTAssertEqual(build.status, 0, build.output)
        let warnings = build.output.split(separator: "\n").filter { $0.contains("warning:") }
        XCTAssertTrue(warnings.isEmpty, "warnings:\n" + warnings.joined(separator: "\n"))
        print(String(format: "MINIMAL CLIENT resolved %d package(s) (%@), first debug build %.0f s", checkouts.count,
                     checkouts.joined(separator: ", "), build.seconds))
    }
}
