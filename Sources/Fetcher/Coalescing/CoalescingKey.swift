import Foundation

/// What makes two requests identical for coalescing: everything that shapes the response (URL, headers,
/// credentials, cookies, TLS policy, limits, source policy), but not the priority or the failed-URL opt-in.
struct CoalescingKey: Hashable {
    let url: String
    let headers: [String: String]
    let timeout: Double
    let credentials: FetchRequest.Credentials?
    let handlesCookies: Bool
    let allowsInvalidCertificates: Bool
    let maximumResponseSize: Int64?
    let maximumRedirects: Int
    let connectTimeout: Double
    let sourcePolicy: SourcePolicy
    let allowsFileURLs: Bool
    let resolveOverrides: [String]

    init(_ request: FetchRequest) {
        url = request.url.absoluteString
        headers = request.headers
        timeout = request.timeout
        credentials = request.credentials
        handlesCookies = request.handlesCookies
        allowsInvalidCertificates = request.allowsInvalidCertificates
        maximumResponseSize = request.maximumResponseSize
        maximumRedirects = request.maximumRedirects
        connectTimeout = request.connectTimeout
        sourcePolicy = request.sourcePolicy
        allowsFileURLs = request.allowsFileURLs
        resolveOverrides = request.resolveOverrides
    }
}
