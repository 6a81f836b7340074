import Foundation
import WebImage
import XCTest

final class FrameImageTests: XCTestCase {
    private func solid(_ r: UInt8, width: Int = 4, height: Int = 4) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height)
        for y in 0..<height { for x in 0..<width { buffer.setPixel(x: x, y: y, to: RGBA(r: r, g: 0, b: 0)) } }
        return buffer
    }

    /// Pixels, encoded bytes (PNG, WebP through the registry) and a file, played by the player in order at
    /// their durations; a frame of another size is shown at the first frame's size.
    func testPlayerPlaysFramesFromEverySource() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("frameimage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { do { try FileManager.default.removeItem(at: directory) } catch { /* already gone */ } }
        let file = directory.appendingPathComponent("f3.png")
        try Image(buffer: try solid(30)).encoded(as: .png).write(to: file)

        let image = try FrameImage(frames: [
            .pixels(try solid(0), duration: 0.1),
            .data(try Image(buffer: try solid(10, width: 8, height: 8)).encoded(as: .png), duration: 0.2),
            .data(try Image(buffer: try solid(20)).encoded(as: .webp, isLossless: true), duration: 0.1),
            .file(file, duration: 0.1),
        ], loopCount: 2)
        XCTAssertEqual(image.animatedFrameCount, 4)
        XCTAssertEqual(image.animatedBytesPerFrame, 64)
        XCTAssertEqual(image.animatedFrame(at: 1)?.width, 4, "resized to the first frame's size")

        let player = AnimatedImagePlayer()
        player.preferredFramesPerSecond = 0
        player.image = image
        var reds: [UInt8] = []
        for _ in 0..<12 {
            player.waitUntilBufferingIsIdle()
            player.step(by: 0.05)
            if let red = player.currentFrame?.buffer.pixel(x: 1, y: 1).r, red != reds.last { reds.append(red) }
        }
        XCTAssertEqual(Array(reds.prefix(5)), [0, 10, 20, 30, 0], "each source in order, then the next loop")
    }

    func testBrokenFramesGiveNilAndTheFirstMustDecode() throws {
        let image = try FrameImage(frames: [.pixels(try solid(1), duration: 0.1), .data(Data([1, 2, 3]), duration: 0.1),
                                            .file(URL(fileURLWithPath: "/nonexistent/x.png"), duration: 0.1)])
        XCTAssertNil(image.animatedFrame(at: 1))
        XCTAssertNil(image.animatedFrame(at: 2))
        XCTAssertNil(image.animatedFrame(at: 9))
        XCTAssertThrowsError(try FrameImage(frames: [.data(Data([1, 2, 3]), duration: 0.1)])) {
            XCTAssertEqual($0 as? ImageCodecError, .unknownFormat)
        }
        XCTAssertThrowsError(try FrameImage(frames: []))
    }
}
