import Foundation
import ImageCodec
import WebImageServerCore
import XCTest

/// `ThumborPath` against thumbor's own route regex: every case of `ThumborPathCases` (thumbor's tests/test_url.py
/// and more, generated from thumbor 7.8 by scripts/thumbor-compat/parser_cases.py) must split the same way.
final class ThumborPathTests: XCTestCase {
    /// The groups thumbor's regex would give, read back from a parsed path.
    private func groups(of path: ThumborPath) -> [String: String] {
        var out: [String: String] = [:]
        switch path.security {
        case .unsafe: out["unsafe"] = "unsafe"
        case .signature(let signature): out["hash"] = signature
        case .none: break
        }
        if path.isDebug { out["debug"] = "debug" }
        if path.isMeta { out["meta"] = "meta" }
        if let trim = path.trim { out["trim"] = trim }
        if let crop = path.crop {
            (out["crop_left"], out["crop_top"], out["crop_right"], out["crop_bottom"]) =
                (String(crop.left), String(crop.top), String(crop.right), String(crop.bottom))
        }
        switch path.fitIn {
        case .fitIn?: out["fit_in"] = "fit-in"
        case .fullFitIn?: (out["fit_in"], out["full"]) = ("fit-in", "full-")
        case .adaptiveFitIn?: (out["fit_in"], out["adaptive"]) = ("fit-in", "adaptive-")
        case .adaptiveFullFitIn?: (out["fit_in"], out["adaptive"], out["full"]) = ("fit-in", "adaptive-", "full-")
        case nil: break
        }
        if path.flipsHorizontally { out["horizontal_flip"] = "-" }
        if path.flipsVertically { out["vertical_flip"] = "-" }
        func dimension(_ d: ThumborPath.Dimension) -> String? {
            switch d {
            case .pixels(0): return nil
            case .pixels(let n): return String(n)
            case .original: return "orig"
            }
        }
        out["width"] = dimension(path.width)
        out["height"] = dimension(path.height)
        if path.horizontalAlignment != .center { out["halign"] = path.horizontalAlignment.rawValue }
        if path.verticalAlignment != .middle { out["valign"] = path.verticalAlignment.rawValue }
        if path.isSmart { out["smart"] = "smart" }
        if !path.filters.isEmpty { out["filters"] = path.filters }
        out["image"] = path.image
        return out
    }

    /// Thumbor's groups, normalised as `groups(of:)` reads ours: a 0 side is absent, `center`/`middle` are the
    /// defaults, an all-zero crop is none (thumbor's `should_crop`).
    private func normalised(_ groups: [String: String]) -> [String: String] {
        var out = groups
        if out["width"] == "0" { out["width"] = nil }
        if out["height"] == "0" { out["height"] = nil }
        if out["halign"] == "center" { out["halign"] = nil }
        if out["valign"] == "middle" { out["valign"] = nil }
        if ["crop_left", "crop_top", "crop_right", "crop_bottom"].allSatisfy({ out[$0] == "0" }) {
            for key in ["crop_left", "crop_top", "crop_right", "crop_bottom"] { out[key] = nil }
        }
        return out
    }

    func testEveryCaseSplitsAsThumborSplitsIt() throws {
        XCTAssertGreaterThan(ThumborPathCases.all.count, 60)
        for testCase in ThumborPathCases.all {
            guard testCase.matches else {
                XCTAssertThrowsError(try ThumborPath(parsing: testCase.path), testCase.path)
                continue
            }
            let path = try ThumborPath(parsing: testCase.path)
            XCTAssertEqual(groups(of: path), normalised(testCase.groups), testCase.path)
        }
    }

    /// thumbor's tests/test_url.py `test_parsing_complete_url`, field by field.
    func testThumborsCompleteURL() throws {
        let path = try ThumborPath(parsing: "/unsafe/debug/meta/trim/300x200:400x500/adaptive-full-fit-in/-300x-400/"
                                   + "left/top/smart/filters:brightness(100)/some/image.jpg")
        XCTAssertEqual(path.security, .unsafe)
        XCTAssertTrue(path.isDebug)
        XCTAssertTrue(path.isMeta)
        XCTAssertEqual(path.trim, "trim")
        XCTAssertEqual(path.crop, SourceCrop(left: 300, top: 200, right: 400, bottom: 500))
        XCTAssertEqual(path.fitIn, .adaptiveFullFitIn)
        XCTAssertEqual(path.width, .pixels(300))
        XCTAssertEqual(path.height, .pixels(400))
        XCTAssertTrue(path.flipsHorizontally)
        XCTAssertTrue(path.flipsVertically)
        XCTAssertEqual(path.horizontalAlignment, .left)
        XCTAssertEqual(path.verticalAlignment, .top)
        XCTAssertTrue(path.isSmart)
        XCTAssertEqual(path.filters, "brightness(100)")
        XCTAssertEqual(path.image, "some/image.jpg")
    }

    /// thumbor's `test_parsing_invalid_url`: an empty path has no image.
    func testEmptyPathIsRefused() {
        XCTAssertThrowsError(try ThumborPath(parsing: "")) { error in
            guard case ImageServiceError.badOptions = error else { return XCTFail("\(error)") }
        }
        // "/" matches thumbor's regex (its optional leading slash given back, the image is "/"), and has no host.
        XCTAssertEqual(try ThumborPath(parsing: "/").image, "/")
        XCTAssertThrowsError(try ThumborPath(parsing: "/").requestOptions())
    }

    func testSignedPartIsTheRawPathAfterTheSignature() throws {
        let path = try ThumborPath(parsing: "/abc%3D/300x200/origin.example/a%20b.jpg")
        XCTAssertEqual(path.security, .signature("abc="))
        XCTAssertEqual(path.signedPart, "300x200/origin.example/a%20b.jpg")
        XCTAssertEqual(path.image, "origin.example/a b.jpg")
    }

    /// The URL thumbor's HTTP loader fetches: `http://` added without a scheme, escapes kept, the rest quoted.
    func testImageURLAsThumborsLoaderMakesIt() throws {
        let cases: [(String, String)] = [
            ("/unsafe/origin.example/a.jpg", "http://origin.example/a.jpg"),
            ("/unsafe/https://origin.example/a.jpg?x=1&y=2", "https://origin.example/a.jpg?x=1&y=2"),
            ("/unsafe/http%3A%2F%2Forigin.example%2Fa.jpg", "http://origin.example/a.jpg"),
            ("/unsafe/origin.example/a%20b.jpg", "http://origin.example/a%20b.jpg"),
            ("/unsafe/origin.example/a%2520b.jpg", "http://origin.example/a%20b.jpg"),
            ("/unsafe/origin.example/caf%C3%A9.jpg", "http://origin.example/caf%C3%A9.jpg"),
            ("/unsafe/origin.example/100%.jpg", "http://origin.example/100%25.jpg"),
        ]
        for (raw, expected) in cases {
            XCTAssertEqual(try ThumborPath(parsing: raw).imageURL, expected, raw)
        }
    }

    func testHostileInputIsATypedErrorNeverACrash() {
        let hostile = [
            "/unsafe/99999999999999999999999x1/img.jpg", "/unsafe/1x1:99999999999999999999999x2/img.jpg",
            "/unsafe/8193x1/img.jpg", "/unsafe/origin.example/%FF%FE.jpg", "/unsafe/filters:quality(1)/a%C3",
            String(repeating: "/a", count: ThumborPath.maximumLength),
        ]
        for path in hostile {
            XCTAssertThrowsError(try ThumborPath(parsing: path), String(path.prefix(60))) { error in
                guard case ImageServiceError.badOptions = error else { return XCTFail("\(error)") }
            }
        }
        // At the limits: 8192 is the largest side, and a path of exactly `maximumLength` bytes is parsed.
        XCTAssertNoThrow(try ThumborPath(parsing: "/unsafe/8192x1/img.jpg"))
        let longest = "/unsafe/" + String(repeating: "a", count: ThumborPath.maximumLength - 8)
        XCTAssertNoThrow(try ThumborPath(parsing: longest))
        XCTAssertThrowsError(try ThumborPath(parsing: longest + "a"))
        // Many slashes and `)/` pairs: the backtracking stays bounded (and ends).
        let slashes = "/" + String(repeating: "filters:a)/", count: 500)
        XCTAssertNoThrow(try ThumborPath(parsing: slashes))
    }

    func testOptionsMapThumborsSemantics() throws {
        func options(_ path: String) throws -> ImageRequestOptions { try ThumborPath(parsing: path).requestOptions() }
        let crop = try options("/unsafe/10x20:110x220/-300x-0/right/bottom/origin.example/a.jpg")
        XCTAssertEqual(crop.sourceCrop, SourceCrop(left: 10, top: 20, right: 110, bottom: 220))
        XCTAssertEqual(crop.width, 300)
        XCTAssertNil(crop.height)
        XCTAssertEqual(crop.fit, .cover)
        XCTAssertTrue(crop.flipsHorizontally)
        XCTAssertTrue(crop.flipsVertically)
        XCTAssertEqual(crop.gravity, .anchor(.southEast))
        XCTAssertEqual(crop.format, .original)
        let fit = try options("/unsafe/fit-in/300x200/smart/filters:format(webp):quality(55):no_upscale():max_bytes(9000)/a.example/a.png")
        XCTAssertEqual(fit.fit, .contain)
        XCTAssertFalse(fit.allowsUpscale)
        XCTAssertEqual(fit.gravity, .smart)
        XCTAssertEqual(fit.format, .webp)
        XCTAssertEqual(fit.quality, 55)
        XCTAssertTrue(fit.clampsBoxToSource)
        XCTAssertEqual(fit.maxBytes, 9000)
        let full = try options("/unsafe/adaptive-full-fit-in/origx200/a.example/a.png")
        XCTAssertEqual(full.fit, .outside)
        XCTAssertTrue(full.swapsBoxToMatchSource)
        XCTAssertTrue(full.widthIsOriginal)
        // The cache key tells them apart.
        XCTAssertNotEqual(fit.canonicalProcessing, full.canonicalProcessing)
        XCTAssertNotEqual(try options("/unsafe/-300x200/a.example/a.png").canonicalProcessing,
                          try options("/unsafe/300x200/a.example/a.png").canonicalProcessing)
        // /image keys are unchanged by the new options at their defaults.
        XCTAssertFalse(ImageRequestOptions(source: URL(string: "http://a.example/a.png")!).canonicalProcessing.contains("filters"))
    }

    func testFiltersParseOrNameTheBadOne() throws {
        let filters = try ThumborFilterParser.parse(
            "blur(3):fill(red,true):background_color(00ff00):upscale():proportion(0.5):grayscale():rotate(-90)"
            + ":round_corner(20|10,255,255,255,1):sharpen(1.5,0.5,true):brightness(10):contrast(-20):rgb(1,-2,3)"
            + ":focal(1x2:30x40):strip_icc():strip_exif():watermark('a.example/w.png',center,-10p,50,20,none)")
        XCTAssertEqual(filters.count, 16)
        XCTAssertEqual(filters[1], .output(.fill(.color(RGBA(r: 255, g: 0, b: 0)), blendsTransparent: true)))
        XCTAssertEqual(filters[2], .output(.backgroundColor(RGBA(r: 0, g: 255, b: 0))))
        XCTAssertEqual(filters[6], .output(.rotate(degrees: 270)))
        XCTAssertEqual(filters[7], .output(.roundCorner(a: 20, b: 10, color: RGBA(r: 255, g: 255, b: 255), transparent: true)))
        XCTAssertEqual(filters[12], .focal(SourceCrop(left: 1, top: 2, right: 30, bottom: 40)))
        XCTAssertEqual(filters[15], .output(.watermark(ThumborWatermark(url: "http://a.example/w.png", x: "center", y: "-10p",
                                                                        alpha: 50, widthRatio: 20, heightRatio: nil))))
        // thumbor's blur(3): a 7-tap kernel of σ 3 cut at 1σ, σ ≈ 1.8 as a Gaussian.
        guard case .output(.blur(let sigma)) = filters[0] else { return XCTFail() }
        XCTAssertEqual(sigma, 1.83, accuracy: 0.05)

        for bad in ["nope()", "quality(abc)", "quality(101)", "quality()", "blur(0)", "fill(notacolour)", "rotate(45)",
                    "rgb(1,2)", "format(tiff)", "round_corner(1|2|3,0,0,0)", "sharpen(1,2)", "brightness(1.5)", "quality"] {
            XCTAssertThrowsError(try ThumborFilterParser.parse(bad), bad) { error in
                guard case ImageServiceError.badOptions(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains(String(bad.prefix { $0 != "(" })), "\(bad): \(message)")
            }
        }
        // At most 32 filters: 32 pass, 33 are refused.
        XCTAssertEqual(try ThumborFilterParser.parse(Array(repeating: "grayscale()", count: 32).joined(separator: ":")).count, 32)
        XCTAssertThrowsError(try ThumborFilterParser.parse(Array(repeating: "grayscale()", count: 33).joined(separator: ":")))
        // What thumbor ignores for these arguments is ignored here too.
        XCTAssertEqual(try ThumborFilterParser.parse("proportion(2):rotate(360):focal(1x1:1x5)"), [.ignored, .ignored, .ignored])
    }
}
