import Dispatch
import Foundation
import WebImage
import XCTest

/// Run under ThreadSanitizer by `make test`. A large tagged full-size decode converts its colour band by band on a
/// helper thread (`ColorBandPipeline`): many such decodes at once, from threads of the same global pool the
/// helpers come from, must all finish (a helper that never starts cannot hold a decode up), each with exactly the
/// pixels of converting after the decode, and with no data race on the rows.
final class ColorPipelineStressTests: XCTestCase {
    static let displayP3 = "/usr/share/color/argyll/ref/DisplayP3.icm"

    /// `jpeg` with `profile` spliced in as one APP2 `ICC_PROFILE` segment right after SOI.
    private func withICCProfile(_ jpeg: Data, _ profile: Data) -> Data {
        var segment = Data([0xFF, 0xE2])
        let length = 2 + 12 + 2 + profile.count
        segment.append(contentsOf: [UInt8(length >> 8), UInt8(length & 0xFF)])
        segment.append(contentsOf: Array("ICC_PROFILE".utf8) + [0, 1, 1])
        segment.append(profile)
        return jpeg.prefix(2) + segment + jpeg.dropFirst(2)
    }

    /// A 1200 × 1000 pseudo-random JPEG tagged Display P3 (1.2 Mpx: pipelined), and its expected sRGB pixels:
    /// the `.preserve` decode converted after the decode on this thread.
    private func fixture() throws -> (data: Data, expected: PixelBuffer) {
        guard let p3 = FileManager.default.contents(atPath: Self.displayP3) else {
            throw XCTSkip("\(Self.displayP3) missing (make test-deps installs argyll-ref)")
        }
        var canvas = try PixelBuffer(width: 1200, height: 1000, pixelFormat: .rgba8)
        canvas.withUnsafeMutableBytes { bytes in
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            for i in 0..<bytes.count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                // Smooth-ish: a slow ramp plus a little noise, as a photo (pure noise would make a huge JPEG).
                let ramp = (i / 4) % 1200 / 5 + (i / 4 / 1200) / 8
                bytes[i] = i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: ramp + (i % 4) * 40 + Int(state >> 61))
            }
        }
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        encoder.addFrame(canvas)
        let data = withICCProfile(try encoder.encode(), p3)
        let preserved = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
        let conversion = ColorConversion(colorSpace: preserved.colorSpace, management: .sRGB)
        XCTAssertTrue(conversion.changesPixels)
        var expected = preserved.firstFrame.buffer
        conversion.apply(to: &expected)
        return (data, expected)
    }

    /// Many concurrent tagged decodes from the global pool's own threads (`concurrentPerform` occupies them, so
    /// the helpers' work items may wait for a thread): every decode completes with the serial pixels.
    func testManyConcurrentTaggedDecodesFromPoolThreads() throws {
        let (data, expected) = try fixture()
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4 * max(2, ProcessInfo.processInfo.activeProcessorCount)) { i in
            var options = DecodeOptions(pixelFormat: .rgba8)
            // Every few decodes a truncated copy: partial decodes hand over their cleared rows too.
            let input = i % 5 == 4 ? data.prefix(data.count * 3 / 4) : data
            if i % 3 == 2 { options.keepsOriginalData = false }
            do {
                let image = try ImageDecoder.decode(input, options: options)
                if i % 5 != 4, image.firstFrame.buffer != expected { failures.withLock { $0 += 1 } }
                if i % 5 == 4, !image.isPartial { failures.withLock { $0 += 1 } }
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, 0)
    }

    /// Decodes on threads of their own (not the pool): 32 decodes on 8 threads at once.
    func testConcurrentTaggedDecodesOnOwnThreads() throws {
        let (data, expected) = try fixture()
        final class Failures: Sendable { let count = Mutex(0) }
        let failures = Failures()
        let group = DispatchGroup()
        var threads: [Thread] = []
        for _ in 0..<8 {
            group.enter()
            let thread = Thread {
                for _ in 0..<4 {
                    let image = try? ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
                    if image?.firstFrame.buffer != expected { failures.count.withLock { $0 += 1 } }
                }
                group.leave()
            }
            threads.append(thread)
        }
        threads.forEach { $0.start() }
        group.wait()
        XCTAssertEqual(failures.count.withLock { $0 }, 0)
    }
}
