import ImageCodec
import WebImageAVIF
import XCTest

/// A test case that registers the AVIF codec around each test, skipping it when this libavif has no AV1 encoder.
class AVIFEncodingTestCase: XCTestCase {
    private var registrations: [ImageCodecRegistration] = []

    override func setUpWithError() throws {
        guard AVIFCodec.isEncodingAvailable else {
            throw XCTSkip("this libavif has no AV1 encoder (\(AVIFCodec.codecVersions)): AVIF encoding is not offered")
        }
        registrations = AVIFCodec.register()
    }

    override func tearDown() {
        registrations.forEach(ImageCodecRegistry.shared.unregister)
    }
}
