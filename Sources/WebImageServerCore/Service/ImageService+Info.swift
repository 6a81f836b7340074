import Crypto
import Foundation
import ImageCodec
import WebImage
import WebImageSync

extension ImageService {
    /// The longest side of the one small decode `/info` makes (for the colour, the placeholders and the colour
    /// space): a downsampled decode, so a JPEG is decoded at 1/8 scale.
    static let infoDecodeSide = 100

    /// Answers one `GET /info?url=…[&sig=…]` request: a JSON `ImageInfoReport` of the source. Signed like `/image`
    /// (the signature covers the query's pairs), the same source policy, limits and originals' cache; the report
    /// is kept in the result cache under its own key (`processing` `info`, format `json`) and answered with an
    /// `ETag` and `Cache-Control` as results are. Options other than `url` and `sig` are a 400.
    ///
    /// - Important: Thread-safe. Never throws: every failure is the same error response `/image` gives.
    public func handleInfo(_ request: ImageServiceRequest) async -> ImageServiceResponse {
        await measured { arrival in
            let pairs = try QueryString.parse(Substring(request.query))
            try checkSignature(pairs)
            var source: URL?
            for (name, value) in pairs {
                switch name {
                case "sig": continue
                case "url":
                    guard source == nil else { throw ImageServiceError.badOptions("url given more than once") }
                    guard let url = URL(string: value), let scheme = url.scheme, !scheme.isEmpty else {
                        throw ImageServiceError.badOptions("url: not an absolute URL")
                    }
                    source = url
                default: throw ImageServiceError.badOptions("\(name): not an option of /info (only url and sig)")
                }
            }
            guard let source else { throw ImageServiceError.badOptions("url: missing") }
            try checkSource(source)
            let key = ResultCache.key(source: manager.cacheKey(for: source), processing: "info", format: "json")
            let result: ImageResult
            let tier: ResultTier
            if configuration.cachesResults, let hit = results.memory.object(forKey: key) {
                (result, tier) = (hit, .resultMemory)
            } else if configuration.cachesResults, let shared = try await sharedDiskResult(forKey: key) {
                (result, tier) = (shared.result, .resultDisk)
                // The body is small and copied into the response: no need to hold the shared bytes.
            } else {
                let (made, isLeader) = try await resultCoalescer.value(forKey: key) { [self] in
                    try await makeInfo(source: source, key: key, deadline: arrival + Self.sourceDeadline(configuration.sourceTimeout))
                }
                (result, tier) = (made.result, isLeader ? made.tier : .coalesced)
            }
            if tier != .origin { metrics.hit(tier) }
            return imageResponse(result, tier: tier, varies: false, ifNoneMatch: request.ifNoneMatch)
        }
    }

    /// The pipeline of one info report: a concurrency slot, the source's bytes (shared with `/image`'s), the header
    /// and one small decode on the render queue within the decode budget, then the result cache.
    private func makeInfo(source url: URL, key: String, deadline: ContinuousClock.Instant) async throws -> (result: ImageResult, tier: ResultTier) {
        try await produce(source: url, key: key, deadline: deadline) { [self] data in try await infoResult(data) }
    }

    private func infoResult(_ data: Data) async throws -> ImageResult {
        let info: ImageInfo
        do { info = try ImageDecoder.info(data) } catch let error as ImageCodecError { throw ImageServiceError(error) } catch {
            throw ImageServiceError.notAnImage("\(error)")
        }
        let options = DecodeOptions(limits: configuration.decodeLimits, firstFrameOnly: true, keepsOriginalData: false,
                                    maxPixelSize: Self.infoDecodeSide)
        let cost = DecodeBudget.estimatedCost(of: data, options: options)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ImageResult, any Error>) in
            _ = manager.decodeBudget.run(cost: cost, on: renderQueue) { [self] reservation in
                let result = Result { () throws -> ImageResult in
                    let thumbnail: Image
                    do { thumbnail = try ImageDecoder.decode(data, options: options) } catch let error as ImageCodecError {
                        throw ImageServiceError(error)
                    }
                    counts.withLock { $0.decodes += 1 }
                    let body: Data
                    do {
                        body = try ImageInfoReport(info: info, byteCount: data.count, thumbnail: thumbnail).jsonData()
                    } catch {
                        throw ImageServiceError.internalFailure("info report: \(error)")
                    }
                    let digest = SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined()
                    return ImageResult(body: body, contentType: "application/json", etag: "\"\(digest)\"")
                }
                reservation.release()
                continuation.resume(with: result)
            }
        }
    }
}
