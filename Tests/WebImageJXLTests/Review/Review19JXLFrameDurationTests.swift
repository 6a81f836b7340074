import ImageCodec
import TestSupport
@testable import WebImageJXL
import XCTest

/// Found while auditing commit 7bc9d31's NaN fix: a frame duration of NaN or ∞ reached `JXLEncoder`'s integer
/// conversion and trapped; `ImageFrame` now keeps durations finite and not negative.
final class Review19JXLFrameDurationTests: XCTestCase {
    func testHostileDurationsEncode() throws {
        let registrations = JXLCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        try HostileFrameDurations.check { try JXLEncoder().encode($0, format: .jpegXL, loopCount: 0, options: EncodeOptions()) }
    }
}
