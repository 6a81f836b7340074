import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Adversarial tests of the result key and the coalescing: two requests that must give different bytes never
/// share a cached result or a pipeline in flight; many tiny results cannot hold more memory than the limit.
final class ImageServerKeyTests: XCTestCase {
    /// A flat `colour` PNG of `size` × `size`.
    static func flat(_ colour: RGBA, size: Int = 16) throws -> [UInt8] {
        var buffer = try PixelBuffer(width: size, height: size, pixelFormat: .rgba8)
        for y in 0..<size { for x in 0..<size { buffer.setPixel(x: x, y: y, to: colour) } }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(buffer)
        return Array(try encoder.encode())
    }

    static let red = RGBA(r: 230, g: 10, b: 10)
    static let blue = RGBA(r: 10, g: 10, b: 230)

    /// Whether `haystack` contains `needle`.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    /// An origin route answering red for a query holding `é` as one code point (U+00E9, NFC), blue for `e` +
    /// U+0301 (NFD), raw or percent-encoded, else 400: two different resources whose URLs are canonically
    /// equivalent Unicode strings (equal as Swift `String`s, different as bytes).
    static func routeNormalisationPair(_ harness: ServerHarness, path: String, delay: Double = 0) throws {
        let red = try flat(Self.red), blue = try flat(Self.blue)
        harness.origin.route(path) { request in
            let uri = Array(request.uri.utf8), upper = Array(request.uri.uppercased().utf8)
            let response: HTTPTestResponse
            if contains(uri, [0xC3, 0xA9]) || contains(upper, Array("%C3%A9".utf8)) {
                response = .bytes(red, contentType: "image/png")
            } else if contains(uri, [0xCC, 0x81]) || contains(upper, Array("%CC%81".utf8)) {
                response = .bytes(blue, contentType: "image/png")
            } else {
                response = .status(400)
            }
            return response.delayed(by: delay)
        }
    }

    static func colour(of reply: ServerHarness.Reply, file: StaticString = #filePath, line: UInt = #line) throws -> RGBA {
        try reply.decoded(file: file, line: line).firstFrame.buffer.pixel(x: 2, y: 2)
    }

    /// `…?n=é` (NFC) and `…?n=é` (NFD) are equal Swift strings but different URLs (different bytes on the wire):
    /// neither the result cache, nor a pipeline in flight, nor the shared transfer may give one's image for the
    /// other.
    func testCanonicallyEquivalentSourceURLsAreNotConfused() async throws {
        let harness = try await ServerHarness()
        try Self.routeNormalisationPair(harness, path: "/n.png")
        let nfc = harness.source("/n.png") + "?n=\u{E9}", nfd = harness.source("/n.png") + "?n=e\u{301}"
        XCTAssertEqual(nfc, nfd, "Swift compares them canonically")
        XCTAssertNotEqual(Array(nfc.utf8), Array(nfd.utf8))

        // One after the other: the second must not come from the first's cached result.
        let first = await harness.image([("url", nfc), ("w", "8"), ("format", "png")])
        let second = await harness.image([("url", nfd), ("w", "8"), ("format", "png")])
        XCTAssertGreaterThan(try Self.colour(of: first).r, 200, "NFC is red")
        XCTAssertGreaterThan(try Self.colour(of: second).b, 200, "NFD is blue, not the cached red")

        // Together, while the origin is slow: neither may join the other's pipeline or transfer.
        try Self.routeNormalisationPair(harness, path: "/m.png", delay: 0.5)
        let urls = [harness.source("/m.png") + "?n=\u{E9}", harness.source("/m.png") + "?n=e\u{301}"]
        let replies = await withTaskGroup(of: (Int, ServerHarness.Reply).self) { group in
            for (index, url) in urls.enumerated() {
                let request = harness.imageURL([("url", url), ("w", "8"), ("format", "png")])
                group.addTask { (index, await ServerHarness.get(request)) }
            }
            return await group.reduce(into: [Int: ServerHarness.Reply]()) { $0[$1.0] = $1.1 }
        }
        XCTAssertGreaterThan(try Self.colour(of: XCTUnwrap(replies[0])).r, 200, "NFC is red")
        XCTAssertGreaterThan(try Self.colour(of: XCTUnwrap(replies[1])).b, 200, "NFD is blue")
        await harness.stop()
    }

    /// Many tiny results of one (long) source URL: the memory tier's limit must count what each entry holds
    /// (its key and bookkeeping, not only the body's bytes), or a 64 KiB tier holds megabytes of keys.
    func testManyTinyResultsCannotHoldMoreThanTheMemoryLimit() async throws {
        let harness = try await ServerHarness { $0.resultMemoryCostLimit = 64 << 10 }
        harness.origin.route("/tiny.png", .bytes(try Self.flat(Self.red, size: 8), contentType: "image/png"))
        // The origin ignores the query: one source, whose URL is 4 KB long.
        let source = harness.source("/tiny.png") + "?pad=" + String(repeating: "a", count: 4_000)
        func pairs(_ index: Int) -> [(String, String)] {
            [("url", source), ("w", String(1 + index % 4)), ("h", "1"), ("q", String(1 + index / 4)), ("format", "gif")]
        }
        let first = await harness.image(pairs(0))
        XCTAssertEqual(first.status, 200)
        XCTAssertLessThan(first.body.count, 100, "a tiny result")
        let again = await harness.image(pairs(0))
        XCTAssertEqual(again.header("X-WebImage-Tier"), "result_memory", "control: it is in memory")
        // 400 distinct results (w × q), 8 at a time: 1.6 MB of keys alone, 25 times the 64 KiB limit.
        for batch in stride(from: 1, to: 400, by: 8) {
            let statuses = await withTaskGroup(of: Int.self) { group in
                for index in batch..<min(batch + 8, 400) {
                    let url = harness.imageURL(pairs(index))
                    group.addTask { await ServerHarness.get(url).status }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses, Array(repeating: 200, count: statuses.count))
        }
        XCTAssertEqual(harness.origin.requestCount(for: "/tiny.png"), 1, "one source")
        let later = await harness.image(pairs(0))
        XCTAssertEqual(later.body, first.body)
        XCTAssertEqual(later.header("X-WebImage-Tier"), "result_disk",
                       "the least recently used of 400 entries was evicted from a 64 KiB memory tier")
        await harness.stop()
    }

    /// Different source URLs give different results, and spellings of one URL that fetch the same bytes agree.
    func testSourceURLSpellings() async throws {
        let harness = try await ServerHarness()
        let red = try Self.flat(Self.red), blue = try Self.flat(Self.blue)
        harness.origin.route("/q.png") { request in
            .bytes(request.uri.hasSuffix("v=2") ? blue : red, contentType: "image/png")
        }
        harness.origin.route("/a/b.png", .bytes(red, contentType: "image/png"))
        harness.origin.route("/a%2Fb.png", .bytes(blue, contentType: "image/png"))
        let base = harness.source("")
        let cases: [(String, isRed: Bool)] = [
            ("\(base)/q.png?v=1", true), ("\(base)/q.png?v=2", false), ("\(base)/q.png?v=1#x", true),
            ("\(base)/q.png?v=2#y", false), ("\(base)/a/b.png", true), ("\(base)/a%2Fb.png", false),
        ]
        for (url, isRed) in cases {
            let reply = await harness.image([("url", url), ("w", "8"), ("format", "png")])
            let colour = try Self.colour(of: reply)
            XCTAssertGreaterThan(isRed ? colour.r : colour.b, 200, url)
        }
        await harness.stop()
    }

    // MARK: Randomized, against a reference model

    struct Source {
        let path: String
        let bytes: [UInt8]
        let width: Int, height: Int          // displayed (after orientation)
        let hasAlpha: Bool
        let frames: Int
    }

    struct Expectation: Hashable, CustomStringConvertible {
        var status: Int
        var width = 0, height = 0
        var format: ImageFormat = .jpeg
        var frames = 1
        var varies = false
        var description: String { status == 200 ? "\(width)×\(height) \(format) \(frames) frame(s)" : "status \(status)" }
    }

    /// The reference model: what the README promises for `options` on `source` with `accept`.
    static func expectation(_ options: [String: String], source: Source, accept: String?) -> Expectation {
        let w = options["w"].flatMap { Int($0) }, h = options["h"].flatMap { Int($0) }
        let fit = options["fit"] ?? "cover"
        let W = Double(source.width), H = Double(source.height)
        var outW: Int, outH: Int
        switch (w, h) {
        case let (tw?, th?):
            switch fit {
            case "contain":
                let s = min(Double(tw) / W, Double(th) / H)
                (outW, outH) = (max(1, Int((W * s).rounded())), max(1, Int((H * s).rounded())))
            default: (outW, outH) = (tw, th)
            }
        case let (tw?, nil): (outW, outH) = (tw, max(1, Int((H * (Double(tw) / W)).rounded())))
        case let (nil, th?): (outW, outH) = (max(1, Int((W * (Double(th) / H)).rounded())), th)
        case (nil, nil): (outW, outH) = (source.width, source.height)
        }
        // No `Accept` from the test: the client sends `FetchRequest.defaultAccept`, which names WebP.
        func accepts(_ type: String) -> Bool {
            (accept ?? FetchRequest.defaultAccept).lowercased().split(separator: ",").contains { range in
                let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                return parts.first == type && !parts.dropFirst().contains("q=0")
            }
        }
        let acceptsWebP = accepts("image/webp")
        let acceptsAVIF = accepts("image/avif")
        let anim = options["anim"] == "1"
        let requested = options["format"] ?? "auto"
        let format: ImageFormat
        switch requested {
        case "jpeg": format = .jpeg
        case "png": format = .png
        case "webp": format = .webp
        case "gif": format = .gif
        case "avif": format = .avif
        case "jxl": format = .jpegXL
        default:
            format = acceptsAVIF ? .avif : acceptsWebP ? .webp : (anim && source.frames > 1) ? .gif : source.hasAlpha ? .png : .jpeg
        }
        let frames = anim && source.frames > 1 && [.gif, .webp, .avif, .jpegXL].contains(format) ? source.frames : 1
        return Expectation(status: 200, width: outW, height: outH, format: format, frames: frames, varies: requested == "auto")
    }

    /// Random requests (option spellings, `Accept` headers, `If-None-Match` of other results), 16 in flight at a
    /// time, each checked against the model by decoding the response: a shared key or pipeline between two
    /// requests that must differ gives one of them the wrong size, format or frame count.
    func testRandomRequestsMatchTheModel() async throws {
        let seed = ProcessInfo.processInfo.environment["WEBIMAGE_SERVER_SEED"].flatMap { UInt64($0) }
            ?? UInt64(Date().timeIntervalSince1970)
        print("testRandomRequestsMatchTheModel seed \(seed) (WEBIMAGE_SERVER_SEED=\(seed) to repeat)")
        var random = SplitMix64(seed: seed)

        let harness = try await ServerHarness()
        let photo = try TestImages.gradient(width: 320, height: 240)
        let alpha = try TestImages.gradient(width: 120, height: 80, format: .png, alpha: true)
        let anim = try TestImages.animatedGIF(frames: 3)
        let rotated = TestImages.withEXIFOrientation(try TestImages.gradient(width: 200, height: 100), orientation: 6)
        let sources = [
            Source(path: "/photo.jpg", bytes: photo, width: 320, height: 240, hasAlpha: false, frames: 1),
            Source(path: "/alpha.png", bytes: alpha, width: 120, height: 80,
                   hasAlpha: try ImageDecoder.info(Data(alpha)).hasAlpha, frames: 1),
            Source(path: "/anim.gif", bytes: anim, width: 60, height: 40,
                   hasAlpha: try ImageDecoder.info(Data(anim)).hasAlpha, frames: 3),
            Source(path: "/rotated.jpg", bytes: rotated, width: 100, height: 200, hasAlpha: false, frames: 1),
        ]
        for source in sources { harness.origin.route(source.path, .bytes(source.bytes)) }
        let accepts: [String?] = [nil, "image/webp,*/*", "image/*", "*/*", "image/webp;q=0, image/*",
                                  "image/avif,image/webp,image/apng,*/*;q=0.8", "IMAGE/WEBP", "image/avif;q=0,image/webp"]

        struct Trial: Sendable {
            var url: URL
            var headers: [String: String]
            var expected: Expectation
            var ifNoneMatch: String?
        }
        var seen: [(etag: String, expected: Expectation)] = []
        var checked = 0
        for _ in 0..<14 {
            var trials: [Trial] = []
            for index in 0..<16 {
                let source = sources[random.next(upTo: sources.count)]
                var options: [String: String] = [:]
                var pairs: [(String, String)] = [("url", harness.source(source.path))]
                // A value and its other spellings that parse the same.
                func add(_ name: String, _ value: String, spellings: [String] = []) {
                    options[name] = value
                    let spelled = ([value] + spellings)[random.next(upTo: spellings.count + 1)]
                    pairs.append((random.next(upTo: 4) == 0 ? "%\(String(format: "%02X", name.utf8.first!))\(name.dropFirst())" : name,
                                  spelled))
                }
                if random.next(upTo: 3) > 0 {
                    let w = 1 + random.next(upTo: 300)
                    add("w", String(w), spellings: ["0\(w)", "+\(w)"])
                }
                if random.next(upTo: 3) > 0 {
                    let h = 1 + random.next(upTo: 300)
                    add("h", String(h), spellings: ["00\(h)"])
                }
                if random.next(upTo: 2) == 0 { add("fit", ["cover", "contain", "fill"][random.next(upTo: 3)]) }
                if random.next(upTo: 2) == 0 { add("format", ["auto", "jpeg", "png", "webp", "gif", "avif", "jxl"][random.next(upTo: 7)]) }
                if random.next(upTo: 3) == 0 { add("q", String(1 + random.next(upTo: 100))) }
                if random.next(upTo: 2) == 0 { add("anim", String(random.next(upTo: 2))) }
                if random.next(upTo: 4) == 0 {
                    let blur = ["0", "0.5", "2"][random.next(upTo: 3)]
                    add("blur", blur, spellings: blur == "2" ? ["2.0", "2e0"] : [])
                }
                pairs.shuffle(using: &random)
                // Percent-encode by hand so the name spellings above (already escaped) stay as they are.
                let query = pairs.map { name, value in
                    "\(name.hasPrefix("%") ? name : QueryString.escape(name))=\(QueryString.escape(value))"
                }.joined(separator: "&")
                let url = URL(string: "http://127.0.0.1:\(harness.port)/image?\(query)")!
                let accept = accepts[random.next(upTo: accepts.count)]
                var headers = ["X-Test-Request": "\(index)"]
                if let accept { headers["Accept"] = accept }
                var trial = Trial(url: url, headers: headers, expected: Self.expectation(options, source: source, accept: accept))
                if !seen.isEmpty, random.next(upTo: 3) == 0 {
                    let other = seen[random.next(upTo: seen.count)]
                    trial.ifNoneMatch = other.etag
                    trial.headers["If-None-Match"] = random.next(upTo: 2) == 0 ? other.etag : "W/\(other.etag)"
                }
                trials.append(trial)
            }
            let replies = await withTaskGroup(of: (Int, ServerHarness.Reply).self) { group in
                for (index, trial) in trials.enumerated() {
                    group.addTask { (index, await ServerHarness.get(trial.url, headers: trial.headers)) }
                }
                return await group.reduce(into: [Int: ServerHarness.Reply]()) { $0[$1.0] = $1.1 }
            }
            for (index, trial) in trials.enumerated() {
                let reply = try XCTUnwrap(replies[index])
                let context = "seed \(seed): \(trial.url.query ?? "") Accept \(trial.headers["Accept"] ?? "none")"
                if reply.status == 304 {
                    // Only for the very representation the tag names.
                    let tag = try XCTUnwrap(trial.ifNoneMatch, context)
                    XCTAssertEqual(reply.header("ETag"), tag, context)
                    let named = seen.first { $0.etag == tag }?.expected
                    XCTAssertEqual(named.map { Expectation(status: 200, width: $0.width, height: $0.height, format: $0.format, frames: $0.frames) },
                                   Expectation(status: 200, width: trial.expected.width, height: trial.expected.height,
                                               format: trial.expected.format, frames: trial.expected.frames),
                                   "a 304 for another representation: \(context)")
                    continue
                }
                XCTAssertEqual(reply.status, 200, context)
                guard reply.status == 200 else { continue }
                let image = try ImageDecoder.decode(reply.body, options: DecodeOptions(preloadAllFrames: true))
                let got = Expectation(status: 200, width: image.width, height: image.height, format: image.format,
                                      frames: image.frameCount, varies: reply.header("Vary") == "Accept")
                XCTAssertEqual(got, trial.expected, context)
                XCTAssertEqual(reply.header("Content-Type"), trial.expected.format.mimeType, context)
                if let etag = reply.header("ETag") { seen.append((etag, trial.expected)) }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 150)
        await harness.stop()
    }
}
