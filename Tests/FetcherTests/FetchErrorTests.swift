import Fetcher
import Foundation
import XCTest

final class FetchErrorTests: XCTestCase {
    private let response = FetchResponse(url: URL(fileURLWithPath: "/x"), statusCode: 404, headers: [],
                                         expectedContentLength: nil)

    func testTransienceDecidesWhatTheFailedURLListRecords() {
        XCTAssertFalse(FetchError.httpStatus(404, response).isTransient)
        XCTAssertFalse(FetchError.httpStatus(410, response).isTransient)
        XCTAssertTrue(FetchError.httpStatus(429, response).isTransient)
        XCTAssertTrue(FetchError.httpStatus(503, response).isTransient)
        XCTAssertTrue(FetchError.timedOut(curlCode: 28).isTransient)
        XCTAssertTrue(FetchError.connectionFailed(curlCode: 7, errno: ECONNREFUSED, message: "").isTransient)
        XCTAssertTrue(FetchError.cancelled.isTransient)
        XCTAssertFalse(FetchError.tooManyRedirects(limit: 10).isTransient)
        XCTAssertFalse(FetchError.responseTooLarge(limit: 1).isTransient)
    }

    func testCausesAreKept() {
        XCTAssertEqual(FetchError.httpStatus(404, response).httpStatusCode, 404)
        XCTAssertEqual(FetchError.notModified(response).httpStatusCode, 304)
        XCTAssertEqual(FetchError.connectionLost(curlCode: 56, errno: ECONNRESET, message: "reset").curlCode, 56)
        XCTAssertNil(FetchError.cancelled.curlCode)
        XCTAssertTrue(FetchError.connectionFailed(curlCode: 7, errno: 111, message: "refused").description.contains("errno 111"))
    }

    func testRequestDefaults() throws {
        let request = FetchRequest(url: try XCTUnwrap(URL(string: "https://example.com/a.webp")))
        XCTAssertEqual(request.timeout, 60)
        XCTAssertEqual(request.inactivityTimeout, 15)
        XCTAssertEqual(request.maximumRedirects, 10)
        XCTAssertEqual(request.priority, .normal)
        XCTAssertFalse(request.handlesCookies)
        XCTAssertFalse(request.allowsInvalidCertificates)
        XCTAssertFalse(request.usesFailedURLList)
        XCTAssertEqual(request.maximumResponseSize, FetchRequest.defaultMaximumResponseSize, "bounded by default")
        XCTAssertEqual(FetchRequest.defaultAccept, "image/webp,image/apng,image/*;q=0.8")
        XCTAssertEqual(FetcherModule.version.isEmpty, false)
    }
}
