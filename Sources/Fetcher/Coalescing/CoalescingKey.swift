import Foundation

/// What makes two requests identical for coalescing: everything that shapes the response (URL, headers,
/// credentials, cookies, TLS policy, limits), but not the priority or the failed-URL opt-in.
struct CoalescingKey: Hashable {
    let url: String
    let headers: [String: String]
    let timeout: Double
    let credentials: FetchRequest.Credentials?
    let handlesCookies: Bool
    let allowsInvalidCertificates: Bool
    let maximumResponseSize: Int64?
    let maximumRedirects: Int

    init(_ request: FetchRequest) {
        url = request.url.absoluteString
        headers = request.headers
        timeout = request.timeout
        credentials = request.credentials
        handlesCookies = request.handlesCookies
        allowsInvalidCertificates = request.allowsInvalidCertificates
        maximumResponseSize = request.maximumResponseSize
        maximumRedirects = request.maximumRedirects
    }
}
