import Foundation

/// What the service needs from one HTTP request in thumbor's URL grammar.
///
/// - Important: A value type; thread-safe.
public struct ThumborServiceRequest: Sendable {
    /// The request's path as received (still percent-encoded), without the query: `/SIGNATURE/300x200/…`.
    public var path: String
    /// The `Accept` header, if any.
    public var accept: String?
    /// The `If-None-Match` header, if any.
    public var ifNoneMatch: String?

    /// Makes a request.
    public init(path: String, accept: String? = nil, ifNoneMatch: String? = nil) {
        self.path = path
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
    }
}

extension ImageService {
    /// Answers one request in thumbor's URL grammar (`ThumborPath`), with its signature (`ThumborSigner`, any of
    /// `thumborKeys`) or `/unsafe/` (only with `allowsUnsigned`), through the same checks, caches and pipeline as
    /// `/image`. Never throws.
    ///
    /// A wrong, missing or unusable signature is answered 400, as thumbor answers it (`/image` answers 403), with
    /// the same body whichever key was tried; so is a source that is not an image (`/image`: 415). Filters thumbor ignores when unknown or malformed are refused here
    /// (400 naming the filter). `filters:preset(NAME)` alone is the preset's request (`/image?url=…&preset=NAME`),
    /// served under `presetsOnly` too.
    public func handle(thumbor request: ThumborServiceRequest) async -> ImageServiceResponse {
        await measured { start in
            do {
                let path = try ThumborPath(parsing: request.path)
                try checkThumborSignature(path)
                let options: ImageRequestOptions
                if let names = try path.presetNames() {
                    // `filters:preset(NAME)`: exactly `/image?url=IMAGE&preset=NAME` (allowed under --presets-only).
                    let pairs = [(name: "url", value: path.imageURL), (name: "preset", value: names)]
                    var resolved = try resolution.options(for: pairs)
                    if !resolution.setsQuality(pairs) {
                        resolved.quality = configuration.defaultQuality
                        resolved.automaticQuality = configuration.defaultAutomaticQuality
                    }
                    options = resolved
                } else {
                    options = try path.requestOptions()
                    try resolution.checkFreeForm(options)
                }
                return try await respond(options: options, accept: request.accept, ifNoneMatch: request.ifNoneMatch,
                                         arrival: start)
            } catch ImageServiceError.badSignature {
                return errorResponse(.badSignature, status: 400)
            } catch ImageServiceError.notAnImage(let message) {
                // thumbor: 400 for a source its engine cannot read (`/image` answers 415).
                return errorResponse(.notAnImage(message), status: 400)
            }
        }
    }

    private func checkThumborSignature(_ path: ThumborPath) throws(ImageServiceError) {
        switch path.security {
        case .unsafe:
            guard configuration.allowsUnsigned else { throw .badSignature }
        case .signature(let signature):
            guard thumborSigner.isValid(signature, for: path.signedPart) else { throw .badSignature }
        case .none:
            throw .badSignature
        }
    }
}
