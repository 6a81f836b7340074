import Foundation
import ImageCodec
import Synchronization
import TestSupport
import XCTest

/// The photographs of the shared corpus (`photos/`) as thumbnails, and the PyPI `ssimulacra2` reference tool.
enum QualityCorpus {
    /// The corpus's `photos/` files (PNG and JPEG), sorted; skips the test when the corpus is absent.
    static func photos() throws -> [URL] {
        let dir: URL
        do { dir = try Corpus.require().appendingPathComponent("photos") } catch { throw XCTSkip("\(error)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
        return names.map { dir.appendingPathComponent($0) }
    }

    /// `url` decoded as a thumbnail of at most `maxPixelSize`, upright (what a service encodes). Made once per
    /// file and size in a test process (several corpus tests start from the same thumbnails; in a debug build the
    /// decodes were a sixth of their time); a `PixelBuffer` is a value, so a test cannot change another's.
    static func thumbnail(_ url: URL, maxPixelSize: Int) throws -> PixelBuffer {
        let key = "\(url.path)#\(maxPixelSize)"
        if let made = thumbnails.withLock({ $0[key] }) { return made }
        let image = try ImageDecoder.decode(try Data(contentsOf: url),
                                            options: DecodeOptions(firstFrameOnly: true, maxPixelSize: maxPixelSize))
        let made = try image.orientation.upright(image.firstFrame.buffer)
        thumbnails.withLock { $0[key] = made }
        return made
    }

    private static let thumbnails = Mutex<[String: PixelBuffer]>([:])

    /// The PyPI `ssimulacra2` 0.3.0 command (`ssymulacra2`): `$WEBIMAGE_SSIMULACRA2`, or the shared tools venv.
    static func referenceTool() throws -> String {
        let candidates = [ProcessInfo.processInfo.environment["WEBIMAGE_SSIMULACRA2"], "/work/venv-tools/bin/ssymulacra2"]
        guard let tool = candidates.compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("the reference ssimulacra2 (PyPI) is not installed; set WEBIMAGE_SSIMULACRA2 to its `ssymulacra2`")
        }
        return tool
    }

    /// The reference tool's score of `distorted` against `reference` (both written as PNG in `folder`).
    static func referenceScore(_ reference: PixelBuffer, _ distorted: PixelBuffer, tool: String, folder: URL) throws -> Double {
        let a = folder.appendingPathComponent("reference.png"), b = folder.appendingPathComponent("distorted.png")
        try PNGEncoder.encode(reference.converted(to: .rgba8), options: EncodeOptions()).write(to: a)
        try PNGEncoder.encode(distorted.converted(to: .rgba8), options: EncodeOptions()).write(to: b)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [a.path, b.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard process.terminationStatus == 0, let score = Double(text.trimmingCharacters(in: .whitespaces)) else {
            throw XCTSkip("ssymulacra2 failed (status \(process.terminationStatus)): \(text)")
        }
        return score
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("quality-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
