/// The libcurl result codes (`CURLcode`) the fetcher tells apart, by their documented, ABI-stable numbers.
///
/// Spelled out here rather than taken from `<curl/curl.h>`: Foundation on Linux carries its own copy of the
/// curl headers in a private module, and whichever module Clang loads first owns `CURLE_…`, so the imported
/// names are sometimes hidden from files that also import Foundation.
enum CurlCode: Int {
    case ok = 0
    case unsupportedProtocol = 1
    case urlMalformat = 3
    case couldntResolveProxy = 5
    case couldntResolveHost = 6
    case couldntConnect = 7
    case http2 = 16
    case partialFile = 18
    case httpReturnedError = 22
    case writeError = 23
    case readError = 26
    case outOfMemory = 27
    case operationTimedOut = 28
    case sslConnectError = 35
    case fileCouldntReadFile = 37
    case tooManyRedirects = 47
    case gotNothing = 52
    case sendError = 55
    case recvError = 56
    case sslCertProblem = 58
    case sslCipher = 59
    case peerFailedVerification = 60
    case badContentEncoding = 61
    case filesizeExceeded = 63
    case sslCACertBadFile = 77
    case sslIssuerError = 83
    case sslPinnedPublicKeyMismatch = 90
    case http2Stream = 92
}
