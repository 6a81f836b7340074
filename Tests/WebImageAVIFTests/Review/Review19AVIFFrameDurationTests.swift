import ImageCodec
import TestSupport
@testable import WebImageAVIF
import XCTest

/// Found while auditing commit 7bc9d31's NaN fix: a frame duration of NaN or ∞ reached `AVIFEncoder`'s integer
/// conversion and trapped; `ImageFrame` now keeps durations finite and not negative.
final class Review19AVIFFrameDurationTests: XCTestCase {
    func testHostileDurationsEncode() throws {
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        try HostileFrameDurations.check { try AVIFEncoder().encode($0, format: .avif, loopCount: 0, options: EncodeOptions()) }
    }
}
