import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Thumbor's URL grammar through real HTTP: the server (in process), a loopback origin, real codecs.
final class ThumborServerTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 800, height: 600), contentType: "image/jpeg"))
        harness.origin.route("/alpha.png", .bytes(try TestImages.gradient(width: 300, height: 200, format: .png, alpha: true),
                                                  contentType: "image/png"))
        harness.origin.route("/small.png", .bytes(try TestImages.gradient(width: 100, height: 50, format: .png),
                                                  contentType: "image/png"))
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    /// `127.0.0.1:PORT/name` (thumbor's image part, without a scheme).
    private func origin(_ name: String) -> String { "127.0.0.1:\(harness.origin.url("/").port!)/\(name)" }

    private func get(_ path: String, headers: [String: String] = [:]) async -> ServerHarness.Reply {
        await harness.get(URL(string: "http://127.0.0.1:\(harness.port)\(path)")!, headers: headers)
    }

    private func image(_ path: String, file: StaticString = #filePath, line: UInt = #line) async throws -> (ServerHarness.Reply, Image) {
        let reply = await get(path)
        XCTAssertEqual(reply.status, 200, String(decoding: reply.body.prefix(200), as: UTF8.self), file: file, line: line)
        return (reply, try reply.decoded(file: file, line: line))
    }

    func testSizesFollowThumbor() async throws {
        let cases: [(String, [Int])] = [
            ("300x200", [300, 200]), ("300x0", [300, 225]), ("0x150", [200, 150]), ("x", [800, 600]),
            ("1600x100", [1600, 100]),                              // a crop scales up
            ("fit-in/400x400", [400, 300]), ("fit-in/1000x1000", [800, 600]), // fit-in never scales up
            ("full-fit-in/400x400", [533, 400]),
            ("adaptive-fit-in/300x400", [400, 300]),                 // the box turned to the landscape source
            ("100x100:500x300/0x0", [400, 200]),                     // the manual crop alone
            ("100x100:500x300/200x0", [200, 100]),
            ("origx100", [800, 100]),
        ]
        for (part, size) in cases {
            let (_, decoded) = try await image("/unsafe/\(part)/\(origin("photo.jpg"))")
            XCTAssertEqual([decoded.width, decoded.height], size, part)
        }
        // The format follows the source's without format(): PNG stays PNG, JPEG stays JPEG.
        let (png, _) = try await image("/unsafe/50x50/\(origin("small.png"))")
        XCTAssertEqual(png.header("Content-Type"), "image/png")
        let (jpeg, _) = try await image("/unsafe/50x50/\(origin("photo.jpg"))")
        XCTAssertEqual(jpeg.header("Content-Type"), "image/jpeg")
    }

    func testFlipsAndAlignmentsMovePixels() async throws {
        // The gradient's red grows to the right: a horizontal flip puts the red side on the left.
        let (_, plain) = try await image("/unsafe/200x150/filters:format(png)/\(origin("photo.jpg"))")
        let (_, flipped) = try await image("/unsafe/-200x150/filters:format(png)/\(origin("photo.jpg"))")
        XCTAssertGreaterThan(plain.firstFrame.buffer.pixel(x: 190, y: 75).r, 200)
        XCTAssertLessThan(flipped.firstFrame.buffer.pixel(x: 190, y: 75).r, 30)
        // Green grows downwards: a vertical flip puts it on top.
        let (_, upsideDown) = try await image("/unsafe/200x-150/filters:format(png)/\(origin("photo.jpg"))")
        XCTAssertGreaterThan(upsideDown.firstFrame.buffer.pixel(x: 100, y: 5).g, 200)
        // A tall crop of the landscape photo: left keeps its left edge (dark red), right its right edge.
        let (_, left) = try await image("/unsafe/100x300/left/filters:format(png)/\(origin("photo.jpg"))")
        let (_, right) = try await image("/unsafe/100x300/right/filters:format(png)/\(origin("photo.jpg"))")
        XCTAssertLessThan(left.firstFrame.buffer.pixel(x: 2, y: 150).r, 20)
        XCTAssertGreaterThan(right.firstFrame.buffer.pixel(x: 97, y: 150).r, 235)
        // A focal box on the right edge pulls a centred crop there, as `right` does.
        let (_, focal) = try await image("/unsafe/100x300/filters:format(png):focal(700x200:800x400)/\(origin("photo.jpg"))")
        XCTAssertGreaterThan(focal.firstFrame.buffer.pixel(x: 97, y: 150).r, 235)
    }

    func testGeometricAndFormatFilters() async throws {
        let (webp, _) = try await image("/unsafe/100x100/filters:format(webp)/\(origin("photo.jpg"))")
        XCTAssertEqual(webp.header("Content-Type"), "image/webp")
        let (low, _) = try await image("/unsafe/400x300/filters:quality(10)/\(origin("photo.jpg"))")
        let (high, _) = try await image("/unsafe/400x300/filters:quality(95)/\(origin("photo.jpg"))")
        XCTAssertLessThan(low.body.count, high.body.count)
        let (_, rotated) = try await image("/unsafe/300x200/filters:rotate(90)/\(origin("photo.jpg"))")
        XCTAssertEqual([rotated.width, rotated.height], [200, 300])
        let (_, half) = try await image("/unsafe/300x200/filters:proportion(0.5)/\(origin("photo.jpg"))")
        XCTAssertEqual([half.width, half.height], [150, 100])
        let (_, clamped) = try await image("/unsafe/1000x0/filters:no_upscale()/\(origin("small.png"))")
        XCTAssertEqual([clamped.width, clamped.height], [100, 50])
        let (_, upscaled) = try await image("/unsafe/fit-in/400x400/filters:upscale()/\(origin("small.png"))")
        XCTAssertEqual([upscaled.width, upscaled.height], [400, 200])
        // fit-in + fill pads to the box, centred, in the fill colour.
        let (_, filled) = try await image("/unsafe/fit-in/400x400/filters:fill(ff0000):format(png)/\(origin("photo.jpg"))")
        XCTAssertEqual([filled.width, filled.height], [400, 400])
        XCTAssertEqual(filled.firstFrame.buffer.converted(to: .rgba8).pixel(x: 200, y: 10), RGBA(r: 255, g: 0, b: 0))
        // fill and upscale reach the box: a box over the output pixel limit is refused before anything is made
        // (8192² = 67 Mpx > 16.7 Mpx), one at it is not.
        let huge = await get("/unsafe/fit-in/8192x8192/filters:fill(red)/\(origin("small.png"))")
        XCTAssertEqual(huge.status, 422)
        let hugeUp = await get("/unsafe/fit-in/8192x8192/filters:upscale()/\(origin("small.png"))")
        XCTAssertEqual(hugeUp.status, 422)
        let (_, atLimit) = try await image("/unsafe/fit-in/4096x4096/filters:fill(red):format(png)/\(origin("small.png"))")
        XCTAssertEqual([atLimit.width, atLimit.height], [4096, 4096])
        // max_bytes lowers the quality until the JPEG fits.
        let (fitting, _) = try await image("/unsafe/400x300/filters:quality(95):max_bytes(6000)/\(origin("photo.jpg"))")
        XCTAssertLessThanOrEqual(fitting.body.count, 6000)
        XCTAssertGreaterThan(high.body.count, 6000, "the limit is below the unconstrained size")
    }

    func testPixelFilters() async throws {
        let (_, grey) = try await image("/unsafe/100x100/filters:grayscale():format(png)/\(origin("photo.jpg"))")
        let p = grey.firstFrame.buffer.pixel(x: 70, y: 30)
        XCTAssertEqual(p.r, p.g)
        XCTAssertEqual(p.g, p.b)
        let (_, background) = try await image("/unsafe/filters:background_color(00ff00):format(png)/\(origin("alpha.png"))")
        XCTAssertTrue(background.firstFrame.buffer.isOpaque)
        let (_, round) = try await image("/unsafe/100x100/filters:round_corner(20,255,255,255):format(png)/\(origin("photo.jpg"))")
        XCTAssertEqual(round.firstFrame.buffer.pixel(x: 0, y: 0), RGBA(r: 255, g: 255, b: 255))
        let (_, dark) = try await image("/unsafe/100x100/filters:brightness(-100):format(png)/\(origin("photo.jpg"))")
        XCTAssertEqual(dark.firstFrame.buffer.pixel(x: 50, y: 50), RGBA(r: 0, g: 0, b: 0))
        for filter in ["blur(5)", "sharpen(2,1,true)", "contrast(30)", "rgb(10,0,-10)", "fill(auto)", "fill(blur)",
                       "fill(transparent,true)", "strip_icc()", "strip_exif()"] {
            _ = try await image("/unsafe/fit-in/120x120/filters:\(filter)/\(origin("alpha.png"))")
        }
    }

    func testWatermarkIsLoadedLikeASourceAndPlacedAsThumborPlacesIt() async throws {
        var red = try PixelBuffer(width: 20, height: 10, pixelFormat: .rgba8)
        for y in 0..<10 { for x in 0..<20 { red.setPixel(x: x, y: y, to: RGBA(r: 255, g: 0, b: 0)) } }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(red)
        harness.origin.route("/mark.png", .bytes(Array(try encoder.encode()), contentType: "image/png"))
        let mark = origin("mark.png")
        // 10 from the left, 10 from the bottom (negative: from the far edge), opaque.
        let (_, placed) = try await image("/unsafe/200x100/filters:watermark(\(mark),10,-10,0):format(png)/\(origin("photo.jpg"))")
        XCTAssertEqual(placed.firstFrame.buffer.converted(to: .rgba8).pixel(x: 15, y: 85), RGBA(r: 255, g: 0, b: 0))
        XCTAssertNotEqual(placed.firstFrame.buffer.converted(to: .rgba8).pixel(x: 5, y: 85), RGBA(r: 255, g: 0, b: 0))
        // alpha 100: invisible; repeat: tiles from the corner; w_ratio 50: half the image's width (100 px).
        let (_, invisible) = try await image("/unsafe/200x100/filters:watermark(\(mark),0,0,100):format(png)/\(origin("photo.jpg"))")
        XCTAssertLessThan(invisible.firstFrame.buffer.converted(to: .rgba8).pixel(x: 5, y: 5).r, 60)
        let (_, tiled) = try await image("/unsafe/200x100/filters:watermark(\(mark),repeat,repeat,0):format(png)/\(origin("photo.jpg"))")
        XCTAssertEqual(tiled.firstFrame.buffer.converted(to: .rgba8).pixel(x: 199, y: 99).r, 255)
        let (_, wide) = try await image("/unsafe/200x100/filters:watermark(\(mark),0,0,0,50):format(png)/\(origin("photo.jpg"))")
        XCTAssertEqual(wide.firstFrame.buffer.converted(to: .rgba8).pixel(x: 95, y: 45), RGBA(r: 255, g: 0, b: 0))
        // Loaded through the same cache as sources: a second request fetches nothing new.
        let fetches = harness.service.statistics.originFetches
        _ = try await image("/unsafe/201x100/filters:watermark(\(mark),10,-10,0)/\(origin("photo.jpg"))")
        XCTAssertEqual(harness.service.statistics.originFetches, fetches)
        // A watermark that is not an image, or off the origin: errors, never a crash.
        harness.origin.route("/text.png", .bytes(Array("not an image".utf8), contentType: "image/png"))
        let broken = await get("/unsafe/200x100/filters:watermark(\(origin("text.png")),0,0,0)/\(origin("photo.jpg"))")
        XCTAssertEqual(broken.status, 400)
        let missing = await get("/unsafe/200x100/filters:watermark(\(origin("none.png")),0,0,0)/\(origin("photo.jpg"))")
        XCTAssertEqual(missing.status, 404)
        // More than 32 filters: refused before anything is fetched.
        XCTAssertThrowsError(try ThumborFilterParser.parse(String(repeating: "grayscale():", count: 33) + "grayscale()"))
    }

    func testBadFiltersAndPathsAre400NamingThem() async throws {
        for (filter, name) in [("nope()", "nope"), ("quality(x)", "quality"), ("rotate(45)", "rotate"), ("fill(zzz)", "fill")] {
            let reply = await get("/unsafe/100x100/filters:\(filter)/\(origin("photo.jpg"))")
            XCTAssertEqual(reply.status, 400, filter)
            // The body names the filter (the HTTP client keeps no error body: asked of the service directly).
            let direct = await harness.service.handle(thumbor: ThumborServiceRequest(
                path: "/unsafe/100x100/filters:\(filter)/\(origin("photo.jpg"))"))
            XCTAssertEqual(direct.status, 400)
            XCTAssertTrue(String(decoding: direct.body, as: UTF8.self).contains(name), String(decoding: direct.body, as: UTF8.self))
        }
        // thumbor's answers: no signature or unsafe, and an unknown origin.
        let plain = await get("/100x100/\(origin("photo.jpg"))")
        XCTAssertEqual(plain.status, 400)
        let missing = await get("/unsafe/100x100/\(origin("missing.jpg"))")
        XCTAssertEqual(missing.status, 404)
        // The routes of the service still win over the grammar.
        let health = await get("/healthz")
        XCTAssertEqual(health.status, 200)
    }

    func testResultsAreCachedPerThumborOptions() async throws {
        let first = await get("/unsafe/120x80/\(origin("photo.jpg"))")
        let again = await get("/unsafe/120x80/\(origin("photo.jpg"))")
        let flipped = await get("/unsafe/-120x80/\(origin("photo.jpg"))")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(again.header("X-WebImage-Tier"), "result_memory")
        XCTAssertEqual(first.header("ETag"), again.header("ETag"))
        XCTAssertNotEqual(first.header("ETag"), flipped.header("ETag"))
        XCTAssertEqual(harness.service.statistics.originFetches, 1)
    }
}

/// Thumbor signatures: `--thumbor-key` (several), `unsafe/` only with `--allow-unsigned`, URLs signed by thumbor's
/// own library.
final class ThumborSignatureTests: XCTestCase {
    static let key = "webimage-thumbor-test-key-0123456789"

    /// Vectors from libthumbor 2.0.2 (`UrlSigner(key).signature(path)`) with `key`.
    func testSignaturesEqualLibthumbors() throws {
        let signer = try ThumborSigner(keys: [Array(Self.key.utf8)])
        XCTAssertEqual(signer.signature(of: "120x80/smart/127.0.0.1:PORT/photo.jpg"), "ngGXXW8sg28Rw6q6XjsFJhKCzA4=")
        XCTAssertEqual(signer.signature(of: "fit-in/300x200/filters:quality(50)/a.example/b%20c.png"),
                       "GTKUDjANhqI8qjNVu08uCqnEAVI=")
        XCTAssertEqual(signer.signature(of: "x"), "-dN6_s05kTwCnsQ1fbcOhNsTlvs=", "URL-safe alphabet")
        XCTAssertTrue(signer.isValid("-dN6_s05kTwCnsQ1fbcOhNsTlvs=", for: "x"))
        XCTAssertFalse(signer.isValid("-dN6_s05kTwCnsQ1fbcOhNsTlvs", for: "x"), "padding required, as thumbor")
        XCTAssertFalse(signer.isValid("", for: "x"))
        XCTAssertThrowsError(try ThumborSigner(keys: [Array("MY_SECURE_KEY".utf8)]))
        XCTAssertNoThrow(try ThumborSigner(keys: [Array(repeating: 1, count: 16)]))
        XCTAssertThrowsError(try ThumborSigner(keys: [Array(repeating: 1, count: 16), Array(repeating: 1, count: 15)]))
    }

    /// The path signed by thumbor's own library in a subprocess (`WEBIMAGE_THUMBOR_PYTHON`, default
    /// /work/venv-tools/bin/python), or `nil` when it is not there.
    private func libthumborSignature(key: String, path: String) throws -> String? {
        let python = ProcessInfo.processInfo.environment["WEBIMAGE_THUMBOR_PYTHON"] ?? "/work/venv-tools/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", "import sys; from libthumbor.url_signers.base64_hmac_sha1 import UrlSigner; "
                             + "sys.stdout.write(UrlSigner(sys.argv[1]).signature(sys.argv[2]).decode())", key, path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    func testSignedURLsWorkWithAnyKeyAndUnsafeOnlyWhenAllowed() async throws {
        let rotated = "an-older-thumbor-key-still-valid"
        let harness = try await ServerHarness { configuration in
            configuration.allowsUnsigned = false
            configuration.thumborKeys = [Array(rotated.utf8), Array(Self.key.utf8)]
        }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 320, height: 240), contentType: "image/jpeg"))
        let path = "120x80/smart/filters:quality(70)/127.0.0.1:\(harness.origin.url("/").port!)/photo.jpg"
        func get(_ signature: String) async -> ServerHarness.Reply {
            await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/\(signature)/\(path)")!)
        }
        let ours = try ThumborSigner(keys: [Array(Self.key.utf8)]).signature(of: path)
        let signed = await get(ours)
        XCTAssertEqual(signed.status, 200)
        XCTAssertEqual(try signed.decoded().width, 120)
        let older = await get(try ThumborSigner(keys: [Array(rotated.utf8)]).signature(of: path))
        XCTAssertEqual(older.status, 200, "every configured key matches")
        if let theirs = try libthumborSignature(key: Self.key, path: path) {
            XCTAssertEqual(theirs, ours)
            let reply = await get(theirs)
            XCTAssertEqual(reply.status, 200, "a URL signed by libthumbor works unchanged")
        } else {
            print("ThumborSignatureTests: libthumbor not found (WEBIMAGE_THUMBOR_PYTHON); its own signing skipped")
        }
        // The `=` percent-encoded, as some clients send it: thumbor decodes it, so do we.
        let encoded = await get(ours.replacingOccurrences(of: "=", with: "%3D"))
        XCTAssertEqual(encoded.status, 200)
        // Wrong signature, signature of another key, unsafe without --allow-unsigned: 400, one body for all.
        let wrong = await get("AAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let otherKey = await get(try ThumborSigner(keys: [Array("a-key-that-is-not-configured".utf8)]).signature(of: path))
        let unsafe = await get("unsafe")
        for reply in [wrong, otherKey, unsafe] {
            XCTAssertEqual(reply.status, 400)
            XCTAssertEqual(reply.body, wrong.body)
        }
        // A signature of the path with one byte changed does not cover it.
        let tampered = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/\(ours)/\(path.replacingOccurrences(of: "120x80", with: "121x80"))")!)
        XCTAssertEqual(tampered.status, 400)
        await harness.stop()
    }
}
