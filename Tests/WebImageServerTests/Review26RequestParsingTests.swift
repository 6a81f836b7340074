import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Review 26: how `/image` parses a request (query, `Accept`) and picks its output and result-cache key.
/// Each test fails on the code as reviewed and names the behaviour it expects.
final class Review26RequestParsingTests: XCTestCase {
    private static let source = (name: "url", value: "https://a.example/x.jpg")

    // MARK: Accept (FormatNegotiation)

    /// WRONG: a media range whose weight can't be read counts as q=1, so the format gets served. That's
    /// fail-open, and it goes against the type's own rule ("a client that does not [decode it] must not
    /// receive it"). RFC 9110 §12.4.2 allows only `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`
    /// and puts no whitespace around "=" (§5.6.6). `image/webp;q=` (an empty value), `image/webp;q=abc` and
    /// `image/webp; q = 0` (a client that meant "not acceptable") are invalid elements, not preferences of 1.
    /// LINE: FormatNegotiation.swift:32: `…flatMap { Double($0.dropFirst(2)) } ?? 1`. The `?? 1` covers both "no
    /// q parameter" and "a q parameter that doesn't parse", and `hasPrefix("q=")` misses `q = 0`.
    /// FIX: split each parameter at "=" and trim the name and value. Use 1 only when no parameter is named `q`.
    /// When the `q` value isn't a valid qvalue, ignore the element (don't insert the format).
    /// (A well-formed `Q=1.0` with tabs and upper case works and is checked below; `q=2` is also invalid, but it
    /// clearly means "acceptable", so it isn't asserted here.)
    func testMalformedAcceptWeightDoesNotMakeAFormatAcceptable() {
        for accept in ["image/webp;q=", "image/webp;q=abc", "image/webp; q = 0"] {
            XCTAssertFalse(FormatNegotiation.acceptedFormats(accept).contains(.webp), accept)
        }
        // Well-formed spellings keep working (these pass today).
        XCTAssertTrue(FormatNegotiation.acceptedFormats("IMAGE/WEBP ;\tQ=1.0").contains(.webp))
        XCTAssertFalse(FormatNegotiation.acceptedFormats("image/webp;Q=0.000").contains(.webp))
    }

    /// WRONG (low priority, contrived): the header is split at every comma, including commas inside a quoted
    /// parameter value (RFC 9110 §5.6.4 quoted-string). So `image/png;note="x, image/avif, y"` reads as though the
    /// client had listed `image/avif`, and a client that never named AVIF gets AVIF.
    /// LINE: FormatNegotiation.swift:23: `accept.split(separator: ",")` (and :24 splits at ";" the same way).
    /// FIX: tokenise the list with quoted strings in mind, e.g. skip commas and semicolons between unescaped
    /// double quotes.
    func testQuotedCommaInAnAcceptParameterNamesNoFormat() {
        XCTAssertEqual(FormatNegotiation.acceptedFormats("image/png;note=\"x, image/avif, y\""), [])
        XCTAssertEqual(FormatNegotiation.acceptedFormats("image/png;a=\"x,image/webp;b=c\""), [])
    }

    // MARK: Query values

    /// WRONG: `Double(_:)` (strtod in the Swift 6.3 runtime) stops at an embedded NUL and succeeds. So
    /// `blur=5%00junk`, `fp=0.5%00junk,0.5` and `q=auto:70%00junk` are accepted as 5, (0.5, 0.5) and auto:70,
    /// although each handler says "expected a number". (`w`/`h` use `Int(_:)`, which does refuse it.) The signature
    /// covers the raw value, so this bypasses nothing, but the validation accepts trailing garbage.
    /// LINES: ImageRequestOptions.swift:180 (`Double(value)` for blur), :199 (`Double(parts[0])`, `Double(parts[1])`
    /// for fp), QualityTarget.swift:72 (`Double(name)`, which also serves `--default-quality`).
    /// FIX: refuse any value that contains U+0000 (or anything outside `[0-9+-.eE]`) before calling `Double(_:)`.
    /// One shared helper could do it for all three.
    func testNumericOptionsRefuseCharactersAfterAnEmbeddedNUL() {
        let bad: [(name: String, value: String)] = [(name: "blur", value: "5\u{0}junk"),
                                                    (name: "fp", value: "0.5\u{0}junk,0.5"),
                                                    (name: "q", value: "auto:70\u{0}junk")]
        for pair in bad {
            XCTAssertThrowsError(try ImageRequestOptions(pairs: [Self.source, pair]), pair.name)
        }
        XCTAssertNil(QualityTarget(parameter: "auto:70\u{0}junk"))
        XCTAssertNil(QualityTarget(name: "70\u{0}junk"))
    }

    /// WRONG (needless extra cache entries): `-0` passes every range check (`(0...100).contains(-0.0)` is true),
    /// and the sign survives into the result key. `blur=-0`, `fp=-0,0.5` and `q=auto:-0` give options that are
    /// `==` to those of `blur=0`, `fp=0,0.5` and `q=auto:0`, and the same bytes, but their `canonicalProcessing`
    /// differs ("blur=-0.0", "fp:-0.0,0.5", "auto:-0.0"). So they get separate result entries. `QualityTarget`
    /// also breaks its own one-spelling promise: two equal targets have different `parameter`s.
    /// LINES: ImageRequestOptions.swift:183 (`parsed.blur = radius`) and :203 (focal point) keep -0.0, which
    /// :224 and CropGravity.swift:28 print. QualityTarget.swift:20 `min(100, max(0, -0.0))` returns -0.0 because
    /// `Swift.max` returns its second argument on ties, and :101 prints it.
    /// FIX: normalise zero when values are stored (`value + 0.0` turns -0.0 into +0.0), in the QualityTarget
    /// setter and in the blur/fp parsing.
    func testNegativeZeroHasTheSameResultKeyAsZero() throws {
        for (name, zero, negative) in [("blur", "0", "-0"), ("fp", "0,0.5", "-0,0.5"), ("q", "auto:0", "auto:-0")] {
            let a = try ImageRequestOptions(pairs: [Self.source, (name: name, value: zero)])
            let b = try ImageRequestOptions(pairs: [Self.source, (name: name, value: negative)])
            XCTAssertEqual(a, b, "\(name): the options are equal")
            XCTAssertEqual(a.canonicalProcessing, b.canonicalProcessing, "\(name): one result key")
        }
        XCTAssertEqual(QualityTarget(parameter: "auto:-0")?.parameter, QualityTarget(parameter: "auto:0")?.parameter)
    }

    // MARK: Result-cache key

    /// WRONG: two requests that need different bytes share one result entry. With `q=auto`, the key holds only
    /// the target (`q=auto:70.0`), but a kept animation ignores the target and is encoded at the fixed `quality`
    /// (ImageEncoder.swift:45-48: automatic quality applies only to one frame). That fixed quality depends on
    /// how auto was reached. With no `q`, the server's defaults apply (ImageService.swift:196-199:
    /// `defaultQuality`, here 30, plus `defaultAutomaticQuality`). With an explicit `q=auto`, the parser leaves
    /// `quality` at `ImageRequestOptions.defaultQuality` (80). Both requests key to
    /// "…&q=auto:70.0&anim=1…|format=webp", so whichever runs second gets the first one's animation.
    /// `ImageServiceConfiguration.defaultAutomaticQuality` says it "wins over defaultQuality for still lossy
    /// output", so setting both is a supported configuration. (The CLI never sets both, so it doesn't hit this.)
    /// LINE: ImageRequestOptions.swift:224 `q=\(automaticQuality.map(\.parameter) ?? String(quality))` drops
    /// `quality` whenever `automaticQuality` is set.
    /// FIX: put the fixed quality in the key too when `automaticQuality` is set (e.g. `q=auto:70.0/80`, at least
    /// when `keepsAnimation`). Or have both paths use the same fixed quality for animations. This test accepts
    /// either fix: it compares against a render made without the result cache.
    func testExplicitQAutoOnAKeptAnimationIsNotServedTheServerDefaultsEntry() async throws {
        let harness = try await ServerHarness { configuration in
            configuration.defaultQuality = 30
            configuration.defaultAutomaticQuality = .medium
        }
        do {
            harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 3), contentType: "image/gif"))
            let base = "url=\(QueryString.escape(harness.source("/anim.gif")))&anim=1&format=webp"
            let defaulted = await harness.service.handle(ImageServiceRequest(query: base))
            let explicit = await harness.service.handle(ImageServiceRequest(query: base + "&q=auto"))
            var uncached = harness.service.configuration
            uncached.cachesResults = false
            let reference = try ImageService(configuration: uncached)
            let fresh = await reference.handle(ImageServiceRequest(query: base + "&q=auto"))
            XCTAssertEqual([defaulted.status, explicit.status, fresh.status], [200, 200, 200])
            XCTAssertEqual(explicit.body, fresh.body,
                           "q=auto&anim=1 served \(explicit.tier?.rawValue ?? "-") bytes that differ from its own render")
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// WRONG: the result key doesn't include `encodeEffort`, yet the effort changes the bytes (`.smallest` writes
    /// progressive JPEG, WebP method 6 with sharp YUV, AVIF speed 6). The disk tier outlives a restart, so a
    /// server restarted with another `--encode-effort` keeps serving the old effort's results until they're
    /// evicted. The key already includes the other server settings that change bytes: `--default-quality` through
    /// the options, and `--prefer-jxl` and the available encoders through the `auto-…` format token.
    /// LINE: ImageService.swift:214-215. The key is source + `canonicalProcessing` + format token, and
    /// `configuration.encodeEffort` (used at ImageService+Pipeline.swift:216) isn't part of it.
    /// FIX: add the effort to the key, e.g. `format: formatToken + "@" + configuration.encodeEffort.rawValue`, or
    /// as a salt in `ResultCache.key`.
    func testAResultMadeAtAnotherEncodeEffortIsNotServed() async throws {
        let harness = try await ServerHarness() // .balanced, the default
        do {
            harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 320, height: 240), contentType: "image/jpeg"))
            let query = "url=\(QueryString.escape(harness.source("/photo.jpg")))&w=200&format=jpeg"
            let balanced = await harness.service.handle(ImageServiceRequest(query: query))
            XCTAssertEqual(balanced.status, 200)
            // The same cache folder, as after a restart with `--encode-effort smallest`.
            var configuration = harness.service.configuration
            configuration.encodeEffort = .smallest
            let restarted = try ImageService(configuration: configuration)
            let smallest = await restarted.handle(ImageServiceRequest(query: query))
            XCTAssertEqual(smallest.status, 200)
            XCTAssertNotEqual(smallest.tier, ResultTier.resultDisk, "the balanced result was served at effort smallest")
            XCTAssertNotEqual(smallest.body, balanced.body, "smallest writes progressive JPEG")
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
