import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Our attention crop against `vips smartcrop --interesting attention` on every photograph of the corpus, in the
/// same run: a narrow window (1:2 of a landscape photo, 2:1 of a portrait one, from the whole photo) where the
/// choice matters. Ours is chosen as the server does for a 400 × 800 (800 × 400) `cover`: on the downsampled
/// decode, then scaled back to the photo's pixels. Goal (issue 33): mean IoU ≥ 0.6 with vips's boxes and
/// ≥ 0.4 on 80 % of the photos; the centre crop's figures are printed beside ours.
final class SmartCropVipsComparisonTests: XCTestCase {
    struct Row {
        var name: String
        var ours: Double
        var centre: Double
    }

    func testAttentionCropAgreesWithVips() throws {
        let corpus: URL
        do { corpus = try Corpus.require() } catch let missing as Corpus.Missing { throw XCTSkip("\(missing)") }
        guard let vips = Self.executable("vips"), let vipsheader = Self.executable("vipsheader") else {
            throw XCTSkip("vips and vipsheader (Debian libvips-tools) not on PATH: cannot compare with vips smartcrop")
        }
        let photos = try Self.photographs(in: corpus.appendingPathComponent("photos"))
        XCTAssertGreaterThanOrEqual(photos.count, 20, "the corpus should hold at least 20 photographs")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("smartcrop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        var rows: [Row] = []
        var windowTimes: [Duration] = []
        for photo in photos {
            let data = try Data(contentsOf: photo)
            let info = try ImageDecoder.info(data)
            let (W, H) = (info.width, info.height)
            let landscape = W >= H
            // The window in the photo's pixels, and the output the server would be asked for.
            let (w, h) = landscape ? (H / 2, H) : (W, W / 2)
            let (outW, outH) = landscape ? (400, 800) : (800, 400)
            let scale = max(Double(outW) / Double(W), Double(outH) / Double(H))
            let maxPixelSize = scale < 1 ? Int((Double(max(W, H)) * scale).rounded(.up)) : nil
            let decoded = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true, maxPixelSize: maxPixelSize))
            let buffer = decoded.firstFrame.buffer
            let (dw, dh) = (buffer.width, buffer.height)
            let cropW = min(dw, max(1, Int((Double(w) * Double(dw) / Double(W)).rounded())))
            let cropH = min(dh, max(1, Int((Double(h) * Double(dh) / Double(H)).rounded())))
            let started = ContinuousClock.now
            let origin = buffer.cropWindow(width: cropW, height: cropH, strategy: .attention)
            windowTimes.append(ContinuousClock.now - started)
            let ours = (x: min(max(Int((Double(origin.x) * Double(W) / Double(dw)).rounded()), 0), W - w),
                        y: min(max(Int((Double(origin.y) * Double(H) / Double(dh)).rounded()), 0), H - h))

            let out = scratch.appendingPathComponent("crop.v")
            try Self.run(vips, ["smartcrop", photo.path, out.path, "\(w)", "\(h)", "--interesting", "attention"])
            // `vips smartcrop` extracts the area: the output's offsets are minus its origin.
            let theirs = (x: -(Int(try Self.run(vipsheader, ["-f", "xoffset", out.path])) ?? 1),
                          y: -(Int(try Self.run(vipsheader, ["-f", "yoffset", out.path])) ?? 1))
            XCTAssertTrue((0...(W - w)).contains(theirs.x) && (0...(H - h)).contains(theirs.y), "vips's box for \(photo.lastPathComponent)")
            let centre = (x: (W - w) / 2, y: (H - h) / 2)
            rows.append(Row(name: photo.lastPathComponent, ours: Self.iou(ours, theirs, w, h), centre: Self.iou(centre, theirs, w, h)))
        }

        func padded(_ s: String) -> String { s.count >= 52 ? s : s + String(repeating: " ", count: 52 - s.count) }
        print(padded("photo") + " IoU ours   centre")
        for row in rows {
            print(padded(row.name) + String(format: " %8.3f %8.3f", row.ours, row.centre))
        }
        let n = Double(rows.count)
        let mean = rows.map(\.ours).reduce(0, +) / n
        let centreMean = rows.map(\.centre).reduce(0, +) / n
        let share = Double(rows.filter { $0.ours >= 0.4 }.count) / n
        let centreShare = Double(rows.filter { $0.centre >= 0.4 }.count) / n
        print(String(format: "mean IoU with vips: ours %.3f, centre %.3f; IoU >= 0.4: ours %.0f%%, centre %.0f%% (%d photos)",
                     mean, centreMean, share * 100, centreShare * 100, rows.count))
        // For information only (a debug build; the benchmark suite `smartcrop` measures release builds).
        let milliseconds = windowTimes.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000 }
        print(String(format: "choosing the window (debug build): mean %.2f ms, slowest %.2f ms, on frames of at most 1200 px",
                     milliseconds.reduce(0, +) / Double(max(milliseconds.count, 1)), milliseconds.max() ?? 0))
        XCTAssertGreaterThanOrEqual(mean, 0.6, "mean IoU with vips smartcrop --interesting attention")
        XCTAssertGreaterThanOrEqual(share, 0.8, "share of photos with IoU >= 0.4")
    }

    /// Intersection over union of two `w × h` boxes.
    static func iou(_ a: (x: Int, y: Int), _ b: (x: Int, y: Int), _ w: Int, _ h: Int) -> Double {
        let ix = max(0, min(a.x, b.x) + w - max(a.x, b.x)), iy = max(0, min(a.y, b.y) + h - max(a.y, b.y))
        let intersection = Double(ix) * Double(iy)
        return intersection / (2 * Double(w) * Double(h) - intersection)
    }

    /// The files `photos/MANIFEST.tsv` marks as photographs (kind `photo`, not `graphic`).
    static func photographs(in folder: URL) throws -> [URL] {
        let text = try String(contentsOf: folder.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        var lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first, let path = header.firstIndex(of: "path"), let kind = header.firstIndex(of: "kind") else {
            throw CocoaError(.fileReadCorruptFile)
        }
        lines.removeFirst()
        return lines.filter { $0.count > max(path, kind) && $0[kind] == "photo" }.map { folder.appendingPathComponent($0[path]) }
    }

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a tool to completion and returns its standard output, trimmed; fails on a non-zero status.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "vips", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments.joined(separator: " ")) failed"])
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
