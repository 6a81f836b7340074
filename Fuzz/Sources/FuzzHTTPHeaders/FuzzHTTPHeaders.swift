import Foundation
import WebImage

/// Every header grammar the library parses, on bytes the fuzzer chooses: `HTTPDate` (Date, Expires,
/// Last-Modified, Retry-After's date form), `DeltaSeconds` (max-age, Age), `CacheControl`, `EntityTag`,
/// `MediaType` (Content-Type), `RetryAfter`, and `HTTPCachePolicy` reading a whole response (its fields and
/// a redirect hop), then answering freshness questions at far-apart instants.
///
/// The input is split at NUL bytes into header values; the first byte picks the field names they are
/// given. A trap or a sanitizer report is a finding; so is a date that does not survive its own formatting.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHeaders(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let values = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    for value in values {
        if let date = HTTPDate.parse(value) {
            // What we write must read back as the same instant.
            guard HTTPDate.parse(HTTPDate.format(date)) == date else { fatalError("date round trip: \(value)") }
        }
        _ = DeltaSeconds.parse(value)
        _ = EntityTag.parse(value)
        _ = MediaType.parse(value)
        _ = RetryAfter.delay(value)
    }
    _ = CacheControl(fieldValues: values)

    let names = ["Cache-Control", "Expires", "Date", "Age", "ETag", "Last-Modified", "Content-Type", "Location",
                 "Retry-After", "cache-control", "AGE"]
    let pick = Int(bytes.first ?? 0)
    let fields = values.enumerated().map { index, value in
        FetchResponse.Header(name: names[(pick + index) % names.count], value: value)
    }
    let url = URL(fileURLWithPath: "/")
    let hop = FetchResponse(url: url, statusCode: 302, headers: Array(fields.prefix(2)), expectedContentLength: nil)
    let response = FetchResponse(url: url, statusCode: 200, headers: fields, expectedContentLength: nil,
                                 redirects: [hop])
    let fetched = Date(timeIntervalSince1970: 1_700_000_000)
    let policy = HTTPCachePolicy(response: response, fetchDate: fetched)
    for now in [Date.distantPast, fetched, fetched.addingTimeInterval(3_600), Date.distantFuture] {
        _ = policy.isFresh(at: now)
        _ = policy.currentAge(at: now)
    }
    _ = policy.refreshed(with: response, at: fetched.addingTimeInterval(10)).isFresh(at: .distantFuture)
    _ = policy.conditionalHeaders
    return 0
}
