import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// AVIF, HEIC and JPEG XL sources served; AVIF and JPEG XL output, explicit and negotiated by `format=auto`
/// (`Accept`, `prefer=jxl`, the server's `prefersJXL`); lossless JPEG recompression; all through real HTTP.
final class ImageServerModernFormatsTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
        try route()
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    private func route() throws {
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 320, height: 240), contentType: "image/jpeg"))
        harness.origin.route("/alpha.png", .bytes(try TestImages.gradient(width: 120, height: 80, format: .png, alpha: true),
                                                  contentType: "image/png"))
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 3), contentType: "image/gif"))
    }

    private func modern(_ folder: String, _ name: String) throws -> Data {
        let root: URL
        do { root = try Corpus.require() } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        return try Data(contentsOf: root.appendingPathComponent("modern/\(folder)/\(name)"))
    }

    func testAVIFHEICAndJXLSourcesAreServedAsJPEGAndWebP() async throws {
        let sources: [(path: String, data: Data, width: Int, height: Int)] = [
            ("/kodim03.avif", try modern("avif", "libavif__kodim03_yuv420_8bpc.avif"), 768, 512),
            ("/test.heic", try modern("heic", "sdwebimage__TestImage.heic"), 0, 0),
            ("/bicycles.jxl", try modern("jxl", "conformance__bicycles.jxl"), 1024, 631),
        ]
        for source in sources {
            harness.origin.route(source.path, .bytes(source.data))
            for format in ["jpeg", "webp"] {
                let reply = await harness.image([("url", harness.source(source.path)), ("w", "200"), ("format", format)])
                if source.path.hasSuffix(".heic") && !ImageService.readsHEIF {
                    XCTAssertEqual(reply.status, 415, "a build without the HEIF trait does not read HEIC")
                    continue
                }
                XCTAssertEqual(reply.status, 200, "\(source.path) as \(format): \(String(decoding: reply.body, as: UTF8.self))")
                let image = try reply.decoded()
                XCTAssertEqual(image.format, format == "jpeg" ? .jpeg : .webp)
                XCTAssertEqual(image.width, 200)
                if source.width > 0 {
                    XCTAssertEqual(image.height, Int((200 * Double(source.height) / Double(source.width)).rounded()), source.path)
                }
            }
        }
    }

    func testExplicitAVIFAndJXLOutput() async throws {
        for (format, expected, mime) in [("avif", ImageFormat.avif, "image/avif"), ("jxl", .jpegXL, "image/jxl")] {
            let reply = await harness.image([("url", harness.source("/alpha.png")), ("w", "60"), ("format", format)])
            XCTAssertEqual(reply.status, 200, String(decoding: reply.body, as: UTF8.self))
            XCTAssertEqual(reply.header("Content-Type"), mime)
            XCTAssertNil(reply.header("Vary"), "an explicit format does not vary")
            let image = try reply.decoded()
            XCTAssertEqual(image.format, expected)
            XCTAssertEqual([image.width, image.height], [60, 40])
            XCTAssertFalse(image.firstFrame.buffer.isOpaque, "alpha kept in \(format)")
        }
        let bad = await harness.image([("url", harness.source("/photo.jpg")), ("format", "heic")])
        XCTAssertEqual(bad.status, 400)
    }

    func testAnimationsAreKeptInAVIFAndJXL() async throws {
        for (format, expected) in [("avif", ImageFormat.avif), ("jxl", .jpegXL)] {
            let reply = await harness.image([("url", harness.source("/anim.gif")), ("anim", "1"), ("format", format)])
            XCTAssertEqual(reply.status, 200, String(decoding: reply.body, as: UTF8.self))
            let image = try reply.decoded()
            XCTAssertEqual(image.format, expected)
            XCTAssertEqual(image.frameCount, 3, format)
            XCTAssertGreaterThan(image.duration(at: 1), 0)
        }
        let auto = await harness.image([("url", harness.source("/anim.gif")), ("anim", "1")], headers: ["Accept": "image/avif,image/*"])
        XCTAssertEqual(auto.header("Content-Type"), "image/avif")
        XCTAssertEqual(try auto.decoded().frameCount, 3)
    }

    func testAutoPrefersAVIFThenWebPThenJXLAndJXLFirstWhenPreferred() async throws {
        let photo = harness.source("/photo.jpg")
        func type(_ accept: String, _ extra: [(String, String)] = []) async -> String? {
            let reply = await harness.image([("url", photo), ("w", "100")] + extra, headers: ["Accept": accept])
            XCTAssertEqual(reply.header("Vary"), "Accept")
            return reply.header("Content-Type")
        }
        let all = "image/jxl,image/avif,image/webp,image/*;q=0.8"
        let avif = await type(all)
        XCTAssertEqual(avif, "image/avif")
        let webp = await type("image/webp,image/avif;q=0,*/*")
        XCTAssertEqual(webp, "image/webp")
        let jxlOnly = await type("image/jxl,*/*")
        XCTAssertEqual(jxlOnly, "image/jxl")
        let preferred = await type(all, [("prefer", "jxl")])
        XCTAssertEqual(preferred, "image/jxl")
        let preferredButNotListed = await type("image/avif,image/webp", [("prefer", "jxl")])
        XCTAssertEqual(preferredButNotListed, "image/avif")
        let plain = await type("image/*")
        XCTAssertEqual(plain, "image/jpeg")
        let bad = await harness.image([("url", photo), ("prefer", "avif")])
        XCTAssertEqual(bad.status, 400)
    }

    func testServerFlagPutsJXLFirst() async throws {
        await harness.stop()
        harness = try await ServerHarness { $0.prefersJXL = true }
        try route()
        let reply = await harness.image([("url", harness.source("/photo.jpg")), ("w", "100")],
                                        headers: ["Accept": "image/avif,image/webp,image/jxl"])
        XCTAssertEqual(reply.header("Content-Type"), "image/jxl")
        XCTAssertEqual(try reply.decoded().width, 100)
    }

    func testAJPEGServedUnresizedAsJXLIsRecompressedLosslessly() async throws {
        let jpeg = Data(try TestImages.gradient(width: 320, height: 240))
        let reply = await harness.image([("url", harness.source("/photo.jpg")), ("format", "jxl")])
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.header("Content-Type"), "image/jxl")
        XCTAssertLessThan(reply.body.count, jpeg.count)
        XCTAssertEqual(harness.service.statistics.decodes, 0, "recompressed, not decoded")
        if ReferenceDecoder.path(of: "djxl") != nil {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recompressed-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try reply.body.write(to: directory.appendingPathComponent("r.jxl"))
            _ = try ReferenceDecoder.run("djxl", [directory.appendingPathComponent("r.jxl").path, directory.appendingPathComponent("r.jpg").path])
            XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("r.jpg")), jpeg, "the origin's JPEG, bit for bit")
        }
        // Resized: pixels are encoded.
        let resized = await harness.image([("url", harness.source("/photo.jpg")), ("w", "100"), ("format", "jxl")])
        XCTAssertEqual(try resized.decoded().width, 100)
        XCTAssertEqual(harness.service.statistics.decodes, 1)
    }

    /// A JPEG libjxl cannot recompress (CMYK) is served as JPEG XL all the same, from its pixels, planned and reserved
    /// again for them.
    func testAJPEGLibjxlRefusesIsEncodedFromItsPixels() async throws {
        let root: URL
        do { root = try Corpus.require() } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        let cmyk = try Data(contentsOf: root.appendingPathComponent("jpeg/jpegdec_jpg-cmyk-1.jpg"))
        let info = try ImageDecoder.info(cmyk)
        harness.origin.route("/cmyk.jpg", .bytes(cmyk, contentType: "image/jpeg"))
        let reply = await harness.image([("url", harness.source("/cmyk.jpg")), ("format", "jxl")])
        XCTAssertEqual(reply.status, 200)
        let image = try reply.decoded()
        XCTAssertEqual(image.format, .jpegXL)
        XCTAssertEqual([image.width, image.height], [info.width, info.height])
        XCTAssertEqual(harness.service.statistics.decodes, 1, "decoded after libjxl refused it")
        XCTAssertEqual(harness.service.manager.decodeBudget.bytesInUse, 0, "both reservations given back")
    }

    func testASourceAtThePixelLimitIsEncodedAndOnePastItRefused() async throws {
        await harness.stop()
        harness = try await ServerHarness { $0.decodeLimits.maxPixelsPerFrame = 100 * 100 }
        harness.origin.route("/at.png", .bytes(try TestImages.gradient(width: 100, height: 100, format: .png)))
        harness.origin.route("/past.png", .bytes(try TestImages.gradient(width: 101, height: 100, format: .png)))
        for format in ["avif", "jxl"] {
            let at = await harness.image([("url", harness.source("/at.png")), ("format", format)])
            XCTAssertEqual(at.status, 200, format)
            XCTAssertEqual(try at.decoded().width, 100)
            let past = await harness.image([("url", harness.source("/past.png")), ("format", format)])
            XCTAssertEqual(past.status, 422, format)
        }
    }
}
