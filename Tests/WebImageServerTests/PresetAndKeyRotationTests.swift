import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Presets (`preset=`), serving presets only, allowed sizes, and several signing keys at once: each tried from
/// the side that would break it (a free-form option slipped past `--presets-only`, a size one pixel off, a preset
/// naming the source, a signature made with a retired key).
final class PresetAndKeyRotationTests: XCTestCase {
    static func preset(_ definition: String) throws -> ImagePreset { try ImagePreset(definition: definition) }

    func testPresetDefinitionsAreCheckedWhenRead() throws {
        let thumb = try Self.preset("thumb=w=200&h=100&fit=cover&format=png")
        XCTAssertEqual(thumb.name, "thumb")
        XCTAssertEqual(thumb.options.map(\.name), ["w", "h", "fit", "format"])
        // Percent-encoding is read as in a query.
        XCTAssertEqual(try Self.preset("g=gravity=north%2Deast").options.first?.value, "north-east")
        for (bad, says) in [("thumb", "NAME=OPTIONS"), ("=w=1", "preset name"), ("a b=w=1", "preset name"),
                            (String(repeating: "n", count: 65) + "=w=1", "preset name"), ("t=url=http://a.example/x.jpg", "url"),
                            ("t=sig=00", "sig"), ("t=preset=other", "preset"), ("t=w=1&w=2", "more than once"),
                            ("t=w=0", "w:"), ("t=w=8193", "w:"), ("t=zoom=2", "unknown option"), ("t=w=%ZZ", "percent")] {
            XCTAssertThrowsError(try Self.preset(bad), bad) { error in
                XCTAssertTrue("\(error)".contains(says), "\(bad): \(error)")
            }
        }
        // Exactly at the limits.
        XCTAssertNoThrow(try Self.preset(String(repeating: "n", count: 64) + "=w=8192"))
        XCTAssertNoThrow(try Self.preset("t=w=1"))
    }

    func testPresetFilesSkipCommentsAndNameTheBadLine() throws {
        let presets = try ImagePreset.presets(file: "# sizes\n\nthumb=w=200&h=200\n  # indented comment\n  card=w=600 \n")
        XCTAssertEqual(presets.map(\.name), ["thumb", "card"])
        XCTAssertThrowsError(try ImagePreset.presets(file: "a=w=1\n\nb=w=-3\n")) { error in
            XCTAssertTrue("\(error)".contains("line 3"), "\(error)")
        }
        XCTAssertEqual(try ImagePreset.presets(file: "").count, 0)
    }

    func testAllowedSizesParse() throws {
        XCTAssertEqual(try AllowedSize.list("400x300,800x0,0x600"),
                       [AllowedSize(width: 400, height: 300), AllowedSize(width: 800, height: nil), AllowedSize(width: nil, height: 600)])
        for bad in ["", "400", "0x0", "400x", "x300", "400x300,", "-1x3", "+4x3", "400X300", "8193x1", "400x300x2", " 400x300",
                    "99999999999999999999x1"] {
            XCTAssertThrowsError(try AllowedSize.list(bad), bad)
        }
        XCTAssertNoThrow(try AllowedSize.list("8192x8192"))
    }

    static let source = "http://origin.example/a.jpg"

    func resolve(_ pairs: [(String, String)], presets: [String] = [], only: Bool = false, sizes: String? = nil) throws -> ImageRequestOptions {
        let resolution = RequestResolution(presets: try presets.map(Self.preset), presetsOnly: only,
                                                allowedSizes: try sizes.map(AllowedSize.list) ?? [])
        return try resolution.options(for: pairs.map { (name: $0.0, value: $0.1) })
    }

    func testPresetsApplyLeftToRightThenTheRequestsOwnOptions() throws {
        let presets = ["thumb=w=200&h=100&fit=contain&q=70", "sharp=q=95&format=webp"]
        var options = try resolve([("url", Self.source), ("preset", "thumb")], presets: presets)
        XCTAssertEqual([options.width, options.height], [200, 100])
        XCTAssertEqual(options.fit, .contain)
        options = try resolve([("url", Self.source), ("preset", "thumb,sharp")], presets: presets)
        XCTAssertEqual(options.quality, 95, "the later preset wins")
        XCTAssertEqual(options.format, .webp)
        XCTAssertEqual(options.width, 200)
        options = try resolve([("url", Self.source), ("preset", "sharp,thumb")], presets: presets)
        XCTAssertEqual(options.quality, 70)
        options = try resolve([("preset", "thumb"), ("url", Self.source), ("w", "50")], presets: presets)
        XCTAssertEqual(options.width, 50, "the request's own option replaces the preset's")
        XCTAssertEqual(options.height, 100)
        // The same image asked for by a preset and spelled out has one result key.
        let spelled = try resolve([("url", Self.source), ("w", "200"), ("h", "100"), ("fit", "contain"), ("q", "70")])
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "thumb")], presets: presets).canonicalProcessing,
                       spelled.canonicalProcessing)

        for (pairs, says) in [([("url", Self.source), ("preset", "nope")], "unknown preset"),
                              ([("url", Self.source), ("preset", "")], "unknown preset"),
                              ([("url", Self.source), ("preset", "thumb,")], "unknown preset"),
                              ([("url", Self.source), ("preset", "thumb"), ("preset", "sharp")], "more than once"),
                              ([("url", Self.source), ("preset", "thumb"), ("w", "1"), ("w", "2")], "more than once"),
                              ([("url", Self.source), ("preset", Array(repeating: "thumb", count: 9).joined(separator: ","))], "at most 8"),
                              ([("preset", "thumb")], "url is required")] {
            XCTAssertThrowsError(try resolve(pairs, presets: presets), "\(pairs)") { error in
                XCTAssertTrue("\(error)".contains(says), "\(pairs): \(error)")
            }
        }
        XCTAssertNoThrow(try resolve([("url", Self.source), ("preset", Array(repeating: "thumb", count: 8).joined(separator: ","))],
                                     presets: presets))
        // `gravity` and `fp` set one thing: the request's focal point replaces the preset's gravity, and back.
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "s"), ("fp", "0.1,0.2")], presets: ["s=gravity=smart&w=9"]).gravity,
                       .focalPoint(x: 0.1, y: 0.2))
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "f"), ("gravity", "north")], presets: ["f=fp=0.1,0.2"]).gravity,
                       .anchor(.north))
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "s,f")], presets: ["s=gravity=smart", "f=fp=0.5,0.5"]).gravity,
                       .focalPoint(x: 0.5, y: 0.5))
        XCTAssertThrowsError(try resolve([("url", Self.source), ("gravity", "north"), ("fp", "0.1,0.2")]), "both in one request")
        XCTAssertThrowsError(try resolve([("url", Self.source), ("preset", "s"), ("gravity", "north"), ("fp", "0.1,0.2")],
                                         presets: ["s=w=9"]), "both in one request, with a preset")
        // A later definition of a name replaces an earlier one.
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "t")], presets: ["t=w=10", "t=w=20"]).width, 20)
    }

    /// The server's default quality (`--default-quality`) applies only when neither the request nor a preset it
    /// names gives `q`.
    func testAPresetsQualityCountsAsTheRequestsOwn() throws {
        let resolution = RequestResolution(presets: [try Self.preset("hq=q=95"), try Self.preset("small=w=10")],
                                           presetsOnly: false, allowedSizes: [])
        func sets(_ pairs: [(String, String)]) -> Bool { resolution.setsQuality(pairs.map { (name: $0.0, value: $0.1) }) }
        XCTAssertTrue(sets([("url", Self.source), ("q", "auto")]))
        XCTAssertTrue(sets([("url", Self.source), ("preset", "hq")]))
        XCTAssertTrue(sets([("url", Self.source), ("preset", "small,hq")]))
        XCTAssertFalse(sets([("url", Self.source), ("preset", "small")]))
        XCTAssertFalse(sets([("url", Self.source), ("preset", "nope")]))
        XCTAssertFalse(sets([("url", Self.source)]))
    }

    func testPresetsOnlyRefusesEveryFreeFormOption() throws {
        let presets = ["thumb=w=200&h=100"]
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "thumb"), ("sig", "00")], presets: presets, only: true).width, 200)
        for name in ["w", "h", "fit", "format", "q", "anim", "blur", "gravity", "fp", "zoom", ""] {
            XCTAssertThrowsError(try resolve([("url", Self.source), ("preset", "thumb"), (name, "1")], presets: presets, only: true),
                                 name) { error in XCTAssertTrue("\(error)".contains("presets only"), "\(name): \(error)") }
        }
        XCTAssertThrowsError(try resolve([("url", Self.source)], presets: presets, only: true)) { error in
            XCTAssertTrue("\(error)".contains("preset is required"), "\(error)")
        }
    }

    func testAllowedSizesBindTheRequestsOwnSizeNotThePresets() throws {
        let sizes = "400x300,800x0"
        XCTAssertNoThrow(try resolve([("url", Self.source), ("w", "400"), ("h", "300")], sizes: sizes))
        XCTAssertNoThrow(try resolve([("url", Self.source), ("w", "800")], sizes: sizes))
        XCTAssertNoThrow(try resolve([("url", Self.source)], sizes: sizes), "no size: the source's own")
        for pairs in [[("w", "401"), ("h", "300")], [("w", "400"), ("h", "299")], [("w", "400")], [("h", "300")],
                      [("w", "800"), ("h", "1")], [("w", "50000")]] {
            XCTAssertThrowsError(try resolve([("url", Self.source)] + pairs, sizes: sizes), "\(pairs)") { error in
                XCTAssertTrue("\(error)".contains("allowed size") || "\(error)".contains("w:"), "\(pairs): \(error)")
            }
        }
        // A preset's size is the operator's own: not checked. A request's own size on top of a preset is.
        XCTAssertEqual(try resolve([("url", Self.source), ("preset", "big")], presets: ["big=w=2000"], sizes: sizes).width, 2000)
        XCTAssertThrowsError(try resolve([("url", Self.source), ("preset", "big"), ("w", "10")], presets: ["big=w=2000"], sizes: sizes))
        // A malformed size is the option's own error, not an "allowed size" one.
        XCTAssertThrowsError(try resolve([("url", Self.source), ("w", "abc")], sizes: sizes)) { error in
            XCTAssertTrue("\(error)".contains("w:"), "\(error)")
        }
    }

    // MARK: Over HTTP

    func testPresetsOverHTTP() async throws {
        let harness = try await ServerHarness { configuration in
            configuration.presets = [try! Self.preset("wide=w=64&h=16&fit=cover&format=png")]
            configuration.presetsOnly = true
        }
        harness.origin.route("/g.jpg") { _ in .bytes(try! TestImages.gradient(width: 200, height: 150), contentType: "image/jpeg") }
        let reply = await harness.image([("url", harness.source("/g.jpg")), ("preset", "wide")])
        let image = try reply.decoded()
        XCTAssertEqual([image.firstFrame.buffer.width, image.firstFrame.buffer.height], [64, 16])
        XCTAssertEqual(reply.header("Content-Type"), "image/png")
        let freeForm = await harness.image([("url", harness.source("/g.jpg")), ("w", "64")])
        XCTAssertEqual(freeForm.status, 400)
        let mixed = await harness.image([("url", harness.source("/g.jpg")), ("preset", "wide"), ("w", "4096")])
        XCTAssertEqual(mixed.status, 400)
        let unknown = await harness.image([("url", harness.source("/g.jpg")), ("preset", "tall")])
        XCTAssertEqual(unknown.status, 400)
        await harness.stop()
    }

    /// Two keys at once: a URL signed with either is served, with the same headers; one signed with a third key,
    /// or with a retired one, is refused.
    func testSeveralKeysAcceptEitherAndNeverSayWhich() async throws {
        let old = Array("the old key, 16+ bytes".utf8), new = Array("the new key, 16+ bytes".utf8)
        let other = Array("somebody else's key!!".utf8)
        let harness = try await ServerHarness { configuration in
            configuration.allowsUnsigned = false
            configuration.signingKeys = [old, new]
        }
        harness.origin.route("/g.jpg") { _ in .bytes(try! TestImages.gradient(width: 64, height: 48), contentType: "image/jpeg") }
        func signed(_ key: [UInt8], w: Int) throws -> URL {
            let pairs = [("url", harness.source("/g.jpg")), ("w", "\(w)")].map { (name: $0.0, value: $0.1) }
            return URL(string: "http://127.0.0.1:\(harness.port)/image?\(try URLSigner(key: key).signedQuery(pairs))")!
        }
        let byOld = await harness.get(try signed(old, w: 32)), byNew = await harness.get(try signed(new, w: 31))
        XCTAssertEqual(byOld.status, 200)
        XCTAssertEqual(byNew.status, 200)
        let names = { (reply: ServerHarness.Reply) in Set((reply.response?.headers ?? []).map { $0.name.lowercased() }) }
        XCTAssertEqual(names(byOld), names(byNew), "the headers do not tell the keys apart")
        let byOther = await harness.get(try signed(other, w: 30))
        XCTAssertEqual(byOther.status, 403)
        await harness.stop()

        // The old key retired: its URLs stop working, the new key's keep working.
        let rotated = try await ServerHarness { configuration in
            configuration.allowsUnsigned = false
            configuration.signingKeys = [new]
        }
        rotated.origin.route("/g.jpg") { _ in .bytes(try! TestImages.gradient(width: 64, height: 48), contentType: "image/jpeg") }
        func signedRotated(_ key: [UInt8]) throws -> URL {
            let pairs = [("url", rotated.source("/g.jpg")), ("w", "32")].map { (name: $0.0, value: $0.1) }
            return URL(string: "http://127.0.0.1:\(rotated.port)/image?\(try URLSigner(key: key).signedQuery(pairs))")!
        }
        let retired = await rotated.get(try signedRotated(old)), current = await rotated.get(try signedRotated(new))
        XCTAssertEqual(retired.status, 403)
        XCTAssertEqual(current.status, 200)
        await rotated.stop()
    }

    func testAShortKeyAmongSeveralStopsTheService() {
        var configuration = ImageServiceConfiguration(cacheDirectory: FileManager.default.temporaryDirectory
            .appendingPathComponent("webimage-keys-\(UUID().uuidString)").path)
        configuration.signingKeys = [Array("a good key of 16 bytes".utf8), Array("short".utf8)]
        XCTAssertThrowsError(try ImageService(configuration: configuration)) { error in
            guard case .badSigningKey? = error as? ImageServiceError else { return XCTFail("\(error)") }
        }
        // `signingKey` is the first of `signingKeys`; setting it replaces them.
        configuration.signingKey = Array("one key only, 16+".utf8)
        XCTAssertEqual(configuration.signingKeys.count, 1)
        configuration.signingKey = nil
        XCTAssertTrue(configuration.signingKeys.isEmpty)
    }

    /// The executable reads `--preset`, `--presets-file`, `--presets-only`, `--allowed-sizes` and repeated `--key`,
    /// and refuses bad ones at start with the reason.
    func testTheExecutableChecksPresetFlagsAtStart() async throws {
        let binary = ImageServerShutdownTests.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) not built; run `swift build` first")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-presets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("presets.txt")
        try "ok=w=10\nbad=w=zero\n".write(to: file, atomically: true, encoding: .utf8)
        let base = ["--port", "0", "--host", "127.0.0.1", "--cache", folder.appendingPathComponent("cache").path]
        for (arguments, says) in [(["--allow-unsigned", "--presets-only"], "--presets-only needs"),
                                  (["--allow-unsigned", "--preset", "x"], "NAME=OPTIONS"),
                                  (["--allow-unsigned", "--presets-file", file.path], "line 2"),
                                  (["--allow-unsigned", "--presets-file", folder.appendingPathComponent("none").path], "--presets-file"),
                                  (["--allow-unsigned", "--allowed-sizes", "400x300,0x0"], "--allowed-sizes"),
                                  (["--key", String(repeating: "ab", count: 16), "--key", "01"], "at least 16")] {
            let process = Process()
            process.executableURL = binary
            process.arguments = base + arguments
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            _ = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            XCTAssertNotEqual(process.terminationStatus, 0, "\(arguments) was accepted")
            XCTAssertTrue(stderr.contains(says), "\(arguments): \(stderr)")
        }
    }
}

/// thumbor URLs are free-form requests too: `--presets-only` and `--allowed-sizes` hold for them.
final class PresetFenceThumborTests: XCTestCase {
    func testThumborURLsCannotBypassPresetsOnlyOrAllowedSizes() async throws {
        let only = try await ServerHarness { configuration in
            configuration.presets = [try! ImagePreset(definition: "wide=w=64&h=16")]
            configuration.presetsOnly = true
        }
        only.origin.route("/g.jpg") { _ in .bytes(try! TestImages.gradient(width: 200, height: 150), contentType: "image/jpeg") }
        let refused = await only.get(URL(string: "http://127.0.0.1:\(only.port)/unsafe/64x16/\(only.source("/g.jpg"))")!)
        XCTAssertEqual(refused.status, 400)
        let preset = await only.image([("url", only.source("/g.jpg")), ("preset", "wide")])
        XCTAssertEqual(preset.status, 200)
        await only.stop()

        let sized = try await ServerHarness { configuration in
            configuration.allowedSizes = [AllowedSize(width: 64, height: 16)]
        }
        sized.origin.route("/g.jpg") { _ in .bytes(try! TestImages.gradient(width: 200, height: 150), contentType: "image/jpeg") }
        let allowed = await sized.get(URL(string: "http://127.0.0.1:\(sized.port)/unsafe/64x16/\(sized.source("/g.jpg"))")!)
        XCTAssertEqual(allowed.status, 200)
        let flipped = await sized.get(URL(string: "http://127.0.0.1:\(sized.port)/unsafe/-64x-16/\(sized.source("/g.jpg"))")!)
        XCTAssertEqual(flipped.status, 200, "a flip is the same size")
        for size in ["65x16", "64x0", "0x16", "-65x16", "64x-17"] {
            let reply = await sized.get(URL(string: "http://127.0.0.1:\(sized.port)/unsafe/\(size)/\(sized.source("/g.jpg"))")!)
            XCTAssertEqual(reply.status, 400, size)
        }
        await sized.stop()
    }
}
