import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// `gravity=` and `fp=` through real HTTP: where the `cover` crop sits in the (oriented) source.
final class ImageServerGravityTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
        // Red rises left to right (x gradient), green top to bottom.
        harness.origin.route("/photo.png", .bytes(try TestImages.gradient(width: 800, height: 600, format: .png), contentType: "image/png"))
        let upright = try TestImages.gradient(width: 400, height: 200, format: .jpeg)
        harness.origin.route("/rotated.jpg", .bytes(TestImages.withEXIFOrientation(upright, orientation: 6), contentType: "image/jpeg"))
        // A saturated object on a flat grey background, in the right quarter.
        var object = try PixelBuffer(width: 600, height: 300, pixelFormat: .rgba8)
        for y in 0..<300 {
            for x in 0..<600 {
                let inside = (480..<540).contains(x) && (120..<180).contains(y)
                object.setPixel(x: x, y: y, to: inside ? RGBA(r: 220, g: 40, b: 30, a: 255) : RGBA(r: 120, g: 120, b: 120, a: 255))
            }
        }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(object)
        harness.origin.route("/object.png", .bytes(Array(try encoder.encode()), contentType: "image/png"))
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 3), contentType: "image/gif"))
        // Two frames, 120 × 40: a red square at the left in the first, at the right in the second.
        var moving = ImageEncoder(format: .gif, loopCount: 0)
        for squareX in [10, 100] {
            var frame = try PixelBuffer(width: 120, height: 40, pixelFormat: .rgba8)
            for y in 0..<40 {
                for x in 0..<120 {
                    let inside = (squareX..<(squareX + 10)).contains(x) && (15..<25).contains(y)
                    frame.setPixel(x: x, y: y, to: inside ? RGBA(r: 230, g: 20, b: 20, a: 255) : RGBA(r: 128, g: 128, b: 128, a: 255))
                }
            }
            moving.addFrame(frame, duration: 0.1)
        }
        harness.origin.route("/moving.gif", .bytes(Array(try moving.encode()), contentType: "image/gif"))
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    private func middle(_ path: String, _ extra: [(String, String)], w: Int = 100, h: Int = 300) async throws -> RGBA {
        let reply = await harness.image([("url", harness.source(path)), ("w", "\(w)"), ("h", "\(h)"), ("format", "png")] + extra)
        let image = try reply.decoded()
        XCTAssertEqual([image.width, image.height], [w, h])
        return image.firstFrame.buffer.pixel(x: w / 2, y: h / 2)
    }

    func testAnchorsMoveTheWindowToTheirEdge() async throws {
        // 800 × 600 covered into 100 × 300: a 200 × 600 window slides across 600 px of slack.
        let west = try await middle("/photo.png", [("gravity", "west")])
        let centre = try await middle("/photo.png", [("gravity", "center")])
        let east = try await middle("/photo.png", [("gravity", "east")])
        // Window centres at x = 100, 400, 700 of 800: red ≈ 32, 128, 223.
        XCTAssertEqual(Double(west.r), 32, accuracy: 10, "\(west)")
        XCTAssertEqual(Double(centre.r), 128, accuracy: 10, "\(centre)")
        XCTAssertEqual(Double(east.r), 223, accuracy: 10, "\(east)")
        // Vertical anchors on a wide box.
        let north = try await middle("/photo.png", [("gravity", "north")], w: 300, h: 100)
        let south = try await middle("/photo.png", [("gravity", "south-east")], w: 300, h: 100)
        XCTAssertLessThan(north.g, 60, "\(north)")
        XCTAssertGreaterThan(south.g, 195, "\(south)")
        XCTAssertGreaterThan(south.r, 100, "\(south)")
    }

    func testFocalPointIsKeptAtTheCentreAndClampedAtEdges() async throws {
        // fp x = 0.3: centre at 240 of 800, window 100…300, red at the output's middle ≈ 0.3 × 255.
        let left = try await middle("/photo.png", [("fp", "0.3,0.5")])
        XCTAssertEqual(Double(left.r), 76, accuracy: 10, "\(left)")
        // fp x = 0.99: the window stops at the right edge (centre 700).
        let edge = try await middle("/photo.png", [("fp", "0.99,0.5")])
        XCTAssertEqual(Double(edge.r), 223, accuracy: 10, "\(edge)")
    }

    func testFocalPointIsInTheOrientedSourcesCoordinates() async throws {
        // Stored 400 × 200 with EXIF 6: shown 200 × 400, its top being the stored left column (low red).
        let top = try await middle("/rotated.jpg", [("fp", "0.5,0")], w: 100, h: 100)
        let bottom = try await middle("/rotated.jpg", [("fp", "0.5,1")], w: 100, h: 100)
        XCTAssertLessThan(top.r, 90, "\(top)")
        XCTAssertGreaterThan(bottom.r, 165, "\(bottom)")
    }

    func testSmartKeepsTheSalientObjectTheCentreCropLoses() async throws {
        // 600 × 300 into 100 × 100: a 300 × 300 window. The centre (150…450) misses the object at 480…540.
        let reply = await harness.image([("url", harness.source("/object.png")), ("w", "100"), ("h", "100"),
                                         ("gravity", "smart"), ("format", "png")])
        let smart = try reply.decoded().firstFrame.buffer
        let centreReply = await harness.image([("url", harness.source("/object.png")), ("w", "100"), ("h", "100"), ("format", "png")])
        let centre = try centreReply.decoded().firstFrame.buffer
        func redPixels(_ b: PixelBuffer) -> Int {
            var n = 0
            for y in 0..<b.height { for x in 0..<b.width where b.pixel(x: x, y: y).r > 180 && b.pixel(x: x, y: y).g < 90 { n += 1 } }
            return n
        }
        XCTAssertEqual(redPixels(centre), 0)
        // The whole object (60 × 60 source pixels = 20 × 20 output pixels, give or take the resampled edge).
        XCTAssertGreaterThanOrEqual(redPixels(smart), 18 * 18)
        // Different results, different keys: the second was not the first from the cache.
        XCTAssertNotEqual(reply.header("ETag"), centreReply.header("ETag"))
        // Entropy answers too (the flat background has none: the object's strip wins).
        let entropy = try await harness.image([("url", harness.source("/object.png")), ("w", "100"), ("h", "100"),
                                               ("gravity", "entropy"), ("format", "png")]).decoded().firstFrame.buffer
        XCTAssertGreaterThanOrEqual(redPixels(entropy), 18 * 18)
    }

    func testAnAnimationIsCroppedThroughOneWindow() async throws {
        // Every frame keeps its size and the animation its frames; the window is chosen once (on the first frame).
        for gravity in ["smart", "entropy", "east"] {
            let reply = await harness.image([("url", harness.source("/anim.gif")), ("w", "20"), ("h", "40"), ("anim", "1"),
                                             ("format", "gif"), ("gravity", gravity)])
            let image = try reply.decoded()
            XCTAssertEqual(image.frameCount, 3, gravity)
            XCTAssertEqual([image.width, image.height], [20, 40], gravity)
        }
        // 120 × 40 into 20 × 20: a 40 × 40 window. Smart finds the square in the first frame and keeps that window
        // for the second, whose square it no longer holds (a window per frame would follow it and shake).
        let reply = await harness.image([("url", harness.source("/moving.gif")), ("w", "20"), ("h", "20"), ("anim", "1"),
                                         ("format", "gif"), ("gravity", "smart")])
        let frames = try reply.decoded().allFrames()
        XCTAssertEqual(frames.count, 2)
        func hasRed(_ b: PixelBuffer) -> Bool {
            (0..<b.height).contains { y in (0..<b.width).contains { x in b.pixel(x: x, y: y).r > 180 && b.pixel(x: x, y: y).g < 90 } }
        }
        XCTAssertTrue(hasRed(frames[0].buffer))
        XCTAssertFalse(hasRed(frames[1].buffer))
    }

    func testGravityDoesNotCropContainOrFill() async throws {
        let reply = await harness.image([("url", harness.source("/photo.png")), ("w", "100"), ("h", "300"), ("fit", "contain"),
                                         ("gravity", "smart"), ("format", "png")])
        let image = try reply.decoded()
        XCTAssertEqual([image.width, image.height], [100, 75])
    }
}
