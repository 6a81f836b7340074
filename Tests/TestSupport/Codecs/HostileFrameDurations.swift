import Foundation
import ImageCodec
import XCTest

/// Frame durations no encoder may trap on (NaN, ±∞, negative, absurdly long), for the animation encoders' tests.
public enum HostileFrameDurations {
    /// The durations tried.
    public static let values: [Double] = [.nan, .infinity, -.infinity, -1, 1e300]

    /// Encodes a two-frame animation (red, then blue for 0.5 s) with each hostile duration on the first frame
    /// through `encode`, decodes it with the registered codecs, and checks both frames are back with finite,
    /// non-negative durations.
    public static func check(file: StaticString = #filePath, line: UInt = #line,
                             encode: ([ImageFrame]) throws -> Data) throws {
        var red = try PixelBuffer(width: 16, height: 16), blue = try PixelBuffer(width: 16, height: 16)
        for y in 0..<16 {
            for x in 0..<16 {
                red.setPixel(x: x, y: y, to: RGBA(r: 255, g: 0, b: 0, a: 255))
                blue.setPixel(x: x, y: y, to: RGBA(r: 0, g: 0, b: 255, a: 255))
            }
        }
        for duration in values {
            let data = try encode([ImageFrame(buffer: red, duration: duration), ImageFrame(buffer: blue, duration: 0.5)])
            let image = try ImageDecoder.decode(data)
            XCTAssertEqual(image.frameCount, 2, "\(duration)", file: file, line: line)
            for index in 0..<image.frameCount {
                let d = try image.frame(at: index).duration
                XCTAssertTrue(d.isFinite && d >= 0, "\(duration): frame \(index) lasts \(d)", file: file, line: line)
            }
        }
    }
}
