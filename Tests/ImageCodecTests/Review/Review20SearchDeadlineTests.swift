@testable import ImageCodec
import XCTest

/// Review of automatic quality's deadline (`EncodeOptions.deadline`): a scored search holds up to three references
/// and makes three comparisons per try for a transparent image (`ScoringReference`), none of which the encoders'
/// own deadline hooks see.
final class Review20SearchDeadlineTests: XCTestCase {
    /// A deadline already passed stops the search before any work, even through an encoder without a deadline
    /// hook (a registered third-party one; libavif 0.11 has none): before, such a search ran all its tries
    /// (references, encodes, decodes and 3 comparisons each) and served the result. A deadline an hour away
    /// changes nothing.
    func testAPassedDeadlineStopsTheSearchWhateverTheEncoder() throws {
        let source = try GIFWebPTestImages.photoLike(width: 96, height: 64, seed: 3, alpha: true)
        var calls = 0
        let hookless = { (buffer: PixelBuffer, options: EncodeOptions) throws -> Data in
            calls += 1
            var unhooked = options
            unhooked.deadline = nil
            return try WebPEncoder.encode(buffer, options: unhooked)
        }
        var options = EncodeOptions()
        options.deadline = ContinuousClock.now.advanced(by: .seconds(-1))
        XCTAssertThrowsError(try AutomaticQuality.encode(source, format: .webp, target: .medium, options: options, encode: hookless)) { error in
            guard case .deadlineExceeded(.webp) = error as? ImageCodecError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(calls, 0, "encodes after the deadline")
        options.deadline = ContinuousClock.now.advanced(by: .seconds(3600))
        let report = try AutomaticQuality.encode(source, format: .webp, target: .medium, options: options, encode: hookless)
        XCTAssertFalse(report.tries.isEmpty)
        XCTAssertGreaterThan(calls, 0)
    }
}
