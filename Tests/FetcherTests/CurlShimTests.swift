import CWebImageCurl
import CWebImageCurlShims
import XCTest

final class CurlShimTests: XCTestCase {
    /// The typed shims reach libcurl: set options and read info back on a real easy handle.
    func testSetoptAndGetinfoThroughShims() throws {
        let easy = try XCTUnwrap(curl_easy_init())
        defer { curl_easy_cleanup(easy) }
        XCTAssertEqual(wi_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, 1_500), CURLE_OK)
        XCTAssertEqual(wi_easy_setopt_pointer(easy, CURLOPT_URL, "file:///dev/null"), CURLE_OK)
        XCTAssertEqual(curl_easy_perform(easy), CURLE_OK)
        var code = -1
        XCTAssertEqual(wi_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code), CURLE_OK)
        XCTAssertEqual(code, 0) // file:// has no response code
        var url: UnsafePointer<CChar>?
        XCTAssertEqual(wi_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &url), CURLE_OK)
        XCTAssertEqual(url.map { String(cString: $0) }, "file:///dev/null")
        // An unknown option number is rejected, not crashed on.
        XCTAssertNotEqual(wi_easy_setopt_long(easy, CURLoption(rawValue: 9_999), 1), CURLE_OK)
    }
}
