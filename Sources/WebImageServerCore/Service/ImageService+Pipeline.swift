import Crypto
import Foundation
import ImageCodec
import WebImage
import WebImageJXL
import WebImageSync

extension ImageService {
    /// The pipeline of one result, run once per key however many requests wait for it: concurrency slot →
    /// source bytes (coalesced per source) → render on the render queue within the decode budget → store.
    func makeResult(options: ImageRequestOptions, candidates: [ImageFormat], key: String,
                    deadline: ContinuousClock.Instant) async throws -> (result: ImageResult, tier: ResultTier) {
        let admitted = running.withLock { count -> Bool in
            guard count < configuration.maxConcurrency else { return false }
            count += 1
            return true
        }
        guard admitted else {
            counts.withLock { $0.saturated += 1 }
            throw ImageServiceError.saturated(retryAfter: configuration.retryAfterSeconds)
        }
        defer { running.withLock { $0 -= 1 } }

        let source = try await sourceBytes(for: options.source, deadline: deadline)
        let result: ImageResult
        do {
            result = try await render(source.data, options: options, candidates: candidates)
        } catch ImageServiceError.notAnImage(let message) {
            forgetSource(options.source)
            throw ImageServiceError.notAnImage(message)
        }
        if configuration.cachesResults {
            do { try results.store(result, forKey: key) } catch {
                Self.logger.warning("result cache write failed", metadata: ["error": "\(error)"])
            }
        }
        switch source.source {
        case .diskCache: return (result, .originalDisk)
        case .sharedCache: return (result, .originalShared)
        default: return (result, .origin)
        }
    }

    /// Removes the source's bytes from the originals' disk cache after they turned out not to be an image.
    ///
    /// The manager stores whatever a 200 carried (a CDN's or a maintenance page, a truncated body) before
    /// anything decodes it; kept, it answered 415 for that URL until evicted, however soon the origin recovered
    /// (SourceCacheReviewTests). It is removed from the shared tier too, where it made every server of a fleet
    /// answer 415 without asking the origin (FleetSourceCacheReviewTests): off the response's path and without
    /// blocking a thread (`ImageCache.removeFromSharedTier`, after this key's write of these bytes, still in
    /// flight), so a flood of error pages neither slows the 415s nor holds threads. A server that took the bytes
    /// from the tier in between removes them again on its own 415.
    private func forgetSource(_ url: URL) {
        guard let cache = manager.cache else { return }
        let key = manager.cacheKey(for: url)
        do { try cache.removeImage(forKey: key, type: .disk) } catch {
            Self.logger.warning("could not remove a non-image source from the cache", metadata: ["error": "\(error)"])
        }
        cache.removeFromSharedTier(forKey: key)
    }

    /// The source's bytes: the originals' disk cache, else one transfer (joined by concurrent requests for
    /// other results of the same source) admitted by the origin gate (a fair share of the transfer slots per host)
    /// and ended at `deadline`, counted from the arrival of the request that started it.
    private func sourceBytes(for url: URL, deadline: ContinuousClock.Instant) async throws -> (data: Data, source: ImageSource) {
        let key = manager.cacheKey(for: url)
        let (value, _) = try await sourceCoalescer.value(forKey: key) { [self] in
            do {
                // A disk hit takes no transfer slot: it must not wait behind a slow host.
                if let cache = manager.cache, let data = try cache.getImageData(forKey: key) {
                    return (data, ImageSource.diskCache)
                }
                let manager = self.manager
                let loaded = try await gate.run(host: url.host?.lowercased() ?? "", deadline: deadline) {
                    try await manager.imageData(for: url)
                }
                if loaded.source == .remote {
                    counts.withLock { $0.originFetches += 1 }
                    metrics.originFetch(bytes: loaded.data.count)
                }
                return loaded
            } catch let refusal as OriginGate.Refusal {
                switch refusal {
                case .transferDeadline:
                    // Started and timed out: a transfer to the origin, as a failed one is.
                    counts.withLock { $0.originFetches += 1 }
                    metrics.originFetch(bytes: 0)
                    throw ImageServiceError.originTimeout
                case .queueDeadline(blockedByHost: true): throw ImageServiceError.originTimeout
                case .queueDeadline(blockedByHost: false), .hostQueueFull, .closed:
                    counts.withLock { $0.saturated += 1 }
                    throw ImageServiceError.saturated(retryAfter: configuration.retryAfterSeconds)
                }
            } catch let error as WebImageError {
                // A failed transfer is still one to the origin, in the metric as in the statistics (an origin
                // answering errors to a flood is load on it: OriginFetchMetricReviewTests).
                if case .fetchFailed = error {
                    counts.withLock { $0.originFetches += 1 }
                    metrics.originFetch(bytes: 0)
                }
                throw ImageServiceError(error)
            }
        }
        return value
    }

    /// Decodes, shapes and encodes on the render queue, the decode waiting for the manager's decode budget, within
    /// `renderTimeout`: past it the request is answered `.renderTimeout` (503) at once and its pipeline slot freed,
    /// while the render stops at its next deadline check and only then releases its reservation (the memory it
    /// still holds stays counted).
    private func render(_ data: Data, options: ImageRequestOptions, candidates: [ImageFormat]) async throws -> ImageResult {
        let timeout = configuration.renderTimeout
        let limited = timeout.isFinite && timeout > 0
        let deadline: ContinuousClock.Instant? = limited ? .now + .seconds(min(timeout, 1e9)) : nil
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ImageResult, any Error>) in
            let answer = RenderAnswer(continuation)
            // The timer is not cancelled when the render ends first (a `DispatchWorkItem` is not Sendable): it then
            // fires into an answer already given, which does nothing. It runs on a serial queue, which libdispatch
            // serves from its overcommitting pool: on the render queue (as wide as the cores) it waited behind the
            // very renders that ran past their deadlines, and no 503 came (RenderTimeoutTests).
            if limited {
                deadlineQueue.asyncAfter(deadline: .now() + min(timeout, 1e9)) {
                    answer.resume(with: .failure(ImageServiceError.renderTimeout(seconds: timeout)))
                }
            }
            let finish: @Sendable (Result<ImageResult, any Error>) -> Void = { [self] result in
                if case .failure(let error) = result, case .renderTimeout? = error as? ImageServiceError {
                    counts.withLock { $0.renderTimeouts += 1 }
                    answer.resume(with: .failure(ImageServiceError.renderTimeout(seconds: timeout)))
                } else {
                    answer.resume(with: result)
                }
            }
            renderQueue.async { [self] in
                let plan: RenderPlan
                do { plan = try RenderPlan(data: data, options: options, candidates: candidates, configuration: configuration) } catch {
                    finish(.failure(error))
                    return
                }
                reserveAndRun(plan, data: data, deadline: deadline, finish: finish)
            }
        }
    }

    /// Runs `plan` once the decode budget has room for its peak, then hands its result to `finish`. A lossless JPEG
    /// recompression reserves only its own cost; when libjxl refuses the JPEG, the render is planned again to
    /// encode the pixels and reserves that cost in turn (reserving both at once held 1.14 GB for a 4096² JPEG
    /// whose recompression grew the resident memory by 250 MB: RenderBudgetAccountingTests).
    private func reserveAndRun(_ plan: RenderPlan, data: Data, deadline: ContinuousClock.Instant?,
                               finish: @escaping @Sendable (Result<ImageResult, any Error>) -> Void) {
        // The peak of the whole render, not only its decode: the decoded source, every buffer shaping
        // makes (a blur's working plane is twice its output), every output frame the encoder holds
        // until it encodes (up to 800 MB for 200 Mpx of animation) and the encoder's own buffers
        // (RenderCost; AnimatedOutputBudgetTests, RenderBudgetAccountingTests).
        let cost = plan.recompressesJPEG ? plan.recompressionCost.peak(decodeCost: 0)
            : plan.cost.peak(decodeCost: DecodeBudget.estimatedCost(of: data, options: plan.decodeOptions))
        let started = Mutex(false)
        _ = manager.decodeBudget.run(cost: cost, on: renderQueue) { [self] reservation in
            started.withLock { $0 = true }
            // Released before the result goes on: the render's buffers are gone once `run` returns, and
            // a response (or a test reading the budget after it) must not see them still reserved.
            let result = Result(catching: { try self.run(plan, data: data, deadline: deadline) })
            reservation.release()
            if case .failure(let error) = result, error is RecompressionRefused {
                var pixels = plan
                pixels.recompressesJPEG = false
                reserveAndRun(pixels, data: data, deadline: deadline, finish: finish)
                return
            }
            finish(result)
        }
        if !started.withLock({ $0 }) { metrics.decodeBudgetWait() }
    }

    private func run(_ plan: RenderPlan, data: Data, deadline: ContinuousClock.Instant?) throws -> ImageResult {
        // A render that waited for the budget past its deadline has been answered already: it does no work.
        try Self.check(deadline)
        let encodeOptions = EncodeOptions(quality: Double(plan.quality) / 100, deadline: deadline)
        if plan.recompressesJPEG {
            do {
                return try result(JXLEncoder.recompressJPEG(data, options: encodeOptions), format: .jpegXL)
            } catch ImageCodecError.deadlineExceeded {
                throw ImageServiceError.renderTimeout(seconds: 0)
            } catch {
                // A JPEG libjxl cannot take (CMYK, arithmetic coding, damaged): its pixels are encoded instead,
                // within their own reservation.
                Self.logger.debug("lossless JPEG recompression refused; encoding pixels", metadata: ["error": "\(error)"])
                throw RecompressionRefused()
            }
        }
        let image: Image
        do { image = try ImageDecoder.decode(data, options: plan.decodeOptions) } catch let error as ImageCodecError {
            throw ImageServiceError(error)
        }
        counts.withLock { $0.decodes += 1 }
        try Self.check(deadline)
        let frames = plan.animates ? try codec { try image.allFrames() } : [image.firstFrame]
        var encoder = ImageEncoder(format: plan.format, loopCount: image.loopCount, options: encodeOptions)
        for frame in frames {
            try Self.check(deadline)
            encoder.addFrame(try shape(frame.buffer, orientation: image.orientation, plan: plan), duration: frame.duration)
        }
        return try result(codec { try encoder.encode() }, format: plan.format)
    }

    private func result(_ body: Data, format: ImageFormat) -> ImageResult {
        counts.withLock { $0.encodes += 1 }
        let digest = SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined()
        return ImageResult(body: body, contentType: format.mimeType, etag: "\"\(digest)\"")
    }

    /// Throws `.renderTimeout` once `deadline` has passed.
    private static func check(_ deadline: ContinuousClock.Instant?) throws(ImageServiceError) {
        if let deadline, ContinuousClock.now >= deadline { throw .renderTimeout(seconds: 0) }
    }

    /// Orientation, centred crop (for `cover`, of the part that scales to the output), resize to the output size, blur.
    private func shape(_ buffer: PixelBuffer, orientation: ImageOrientation, plan: RenderPlan) throws -> PixelBuffer {
        let g = plan.geometry
        return try codec {
            var b = try buffer.applyingOrientation(orientation)
            if g.scaledWidth != g.outputWidth || g.scaledHeight != g.outputHeight {
                // Crop first, in the buffer's own pixels, the centre that scales to the output: scaling the whole
                // image then cropping would make a cover of an extreme aspect ratio allocate up to 16384² pixels
                // (1000 × 1 into 1 × 512: 512,000 × 512, 1 GiB) for a few hundred pixels of output.
                let (width, height) = RenderPlan.cropSize(of: (b.width, b.height), geometry: g)
                b = try b.cropped(x: (b.width - width) / 2, y: (b.height - height) / 2, width: width, height: height)
            }
            if b.width != g.outputWidth || b.height != g.outputHeight {
                b = try b.resized(width: g.outputWidth, height: g.outputHeight)
            }
            if plan.blur > 0 { b = try b.blurred(radius: plan.blur) }
            return b
        }
    }

    /// Runs `body`, turning codec and processing errors into service errors.
    private func codec<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as ImageCodecError {
            throw ImageServiceError(error)
        } catch let error as ImageProcessingError {
            throw ImageServiceError.internalFailure("\(error)")
        }
    }
}

/// What to do with one source for one request, decided from the header alone (no pixels decoded yet).
struct RenderPlan: Sendable {
    var format: ImageFormat
    /// A JPEG source asked for as JPEG XL at its own size, without crop, blur or orientation to apply: recompressed
    /// losslessly (`JXLEncoder.recompressJPEG`) instead of decoded and encoded.
    var recompressesJPEG = false
    var geometry: OutputGeometry
    var decodeOptions: DecodeOptions
    var animates: Bool
    var quality: Int
    var blur: Double
    /// The memory the render holds at its peak besides its decode (reserved in the decode budget with it).
    var cost: RenderCost
    /// The memory a lossless JPEG recompression holds (reserved instead of `cost` while `recompressesJPEG`).
    var recompressionCost = RenderCost(jpegRecompressionOf: 0, sourceBytes: 0)

    init(data: Data, options: ImageRequestOptions, candidates: [ImageFormat], configuration: ImageServiceConfiguration) throws(ImageServiceError) {
        let info: ImageInfo
        do { info = try ImageDecoder.info(data) } catch let error as ImageCodecError { throw ImageServiceError(error) } catch {
            throw .notAnImage("\(error)")
        }
        let animated = info.frameCount > 1
        let (w, h) = info.orientation.swapsDimensions ? (info.height, info.width) : (info.width, info.height)
        // Source limits (pixels, frames) are the decoder's: it checks them from the header before allocating,
        // and for a downsampled decode on what it allocates.
        geometry = OutputGeometry(sourceWidth: w, sourceHeight: h, targetWidth: options.width, targetHeight: options.height,
                                  fit: options.fit)
        let outputPixels = geometry.outputWidth * geometry.outputHeight
        // Only the output is ever made: `shape` crops a `cover` before it scales, and every other fit's scaled
        // size is its output. Checking the uncropped scaled size refused (422, "output 1×512 is over…") an
        // extreme cover such as 2000 × 1 into 1 × 512 (CoverGeometryReviewTests); the resize's own limit still
        // holds for a configured `maximumOutputPixels` above it.
        guard outputPixels <= configuration.maximumOutputPixels, outputPixels <= PixelBuffer.maxProcessedPixelCount else {
            throw .pixelLimit("output \(geometry.outputWidth)×\(geometry.outputHeight) is over the maximum of "
                              + "\(configuration.maximumOutputPixels) pixels")
        }
        // `auto` does not pick a format for an output it cannot hold; an explicit format that cannot is a 422.
        let side = max(geometry.outputWidth, geometry.outputHeight)
        format = FormatNegotiation.outputFormat(requested: options.format, candidates: candidates,
                                                sourceHasAlpha: info.hasAlpha, keepsAnimation: options.keepsAnimation && animated,
                                                fits: { side <= Self.maximumSide(of: $0) })
        guard side <= Self.maximumSide(of: format) else {
            throw .pixelLimit("output \(geometry.outputWidth)×\(geometry.outputHeight) is over the \(format) maximum of "
                              + "\(Self.maximumSide(of: format)) pixels a side")
        }
        animates = options.keepsAnimation && animated && Self.animatedFormats.contains(format)
            && ImageCodecRegistry.shared.canEncode(format, frameCount: 2)
        // Every kept frame is made at the output size: the output animation is held to the animation limit the
        // source is (a 1×1, 1,000-frame GIF asked for at 4096×4096 would otherwise be 67 GB of frames).
        if animates {
            let (pixels, overflow) = outputPixels.multipliedReportingOverflow(by: info.frameCount)
            guard !overflow, pixels <= configuration.decodeLimits.maxTotalPixels else {
                throw .pixelLimit("output animation of \(info.frameCount) frames of \(geometry.outputWidth)×"
                                  + "\(geometry.outputHeight) is over the maximum of \(configuration.decodeLimits.maxTotalPixels) "
                                  + "pixels in all frames")
            }
        }
        decodeOptions = DecodeOptions(limits: configuration.decodeLimits, preloadAllFrames: animates,
                                      firstFrameOnly: !animates, keepsOriginalData: false,
                                      maxPixelSize: animates ? nil : geometry.decodePixelSize)
        quality = options.quality
        blur = options.blur
        recompressesJPEG = format == .jpegXL && info.format == .jpeg && info.frameCount == 1 && info.orientation == .up
            && options.blur == 0 && geometry.outputWidth == info.width && geometry.outputHeight == info.height
            && geometry.scaledWidth == info.width && geometry.scaledHeight == info.height
            && info.width * info.height <= configuration.decodeLimits.maxPixelsPerFrame
        // The frames decoded: every frame at canvas size for a kept animation, else the first frame at the size
        // the downsampled decode gives (`PixelBuffer.fittingSize` of the stored size).
        let decoded = animates || geometry.decodePixelSize == nil ? (info.width, info.height)
            : PixelBuffer.fittingSize(width: info.width, height: info.height, maxPixelSize: geometry.decodePixelSize!)
        cost = RenderCost(inputWidth: decoded.0, inputHeight: decoded.1, frames: animates ? info.frameCount : 1,
                          orientation: info.orientation, geometry: geometry, blur: blur,
                          outputFrames: animates ? info.frameCount : 1, format: format)
        recompressionCost = RenderCost(jpegRecompressionOf: info.width * info.height, sourceBytes: data.count)
    }

    /// The formats `anim=1` keeps animated (with a registered encoder that writes animations).
    static let animatedFormats: Set<ImageFormat> = [.gif, .webp, .avif, .jpegXL]

    /// The centred crop `ImageService.shape` takes from a (decoded, oriented) frame of `size` before scaling:
    /// the part that scales to the output, in the frame's own pixels.
    static func cropSize(of size: (width: Int, height: Int), geometry g: OutputGeometry) -> (width: Int, height: Int) {
        func side(_ output: Int, _ scaled: Int, _ own: Int) -> Int {
            min(own, max(1, Int((Double(output) * Double(own) / Double(scaled)).rounded())))
        }
        return (side(g.outputWidth, g.scaledWidth, size.width), side(g.outputHeight, g.scaledHeight, size.height))
    }

    /// The longest side the encoder of `format` writes: WebP 16,383 (`WEBP_MAX_DIMENSION`), JPEG 65,500
    /// (libjpeg's `JPEG_MAX_DIMENSION`), GIF 65,535 (16-bit fields), AVIF 65,536 (AV1), JPEG XL 262,144 (level 5),
    /// PNG 2³¹ − 1.
    static func maximumSide(of format: ImageFormat) -> Int {
        switch format {
        case .webp: return 16_383
        case .avif: return 65_536
        case .jpegXL: return 1 << 18
        case .jpeg: return 65_500
        case .gif: return 65_535
        default: return Int(Int32.max)
        }
    }
}

/// libjxl refused to recompress a JPEG: the render runs again on its pixels, with their own reservation.
struct RecompressionRefused: Error {}

/// The continuation of one render, resumed once: by the render's end or by its deadline, whichever comes first.
///
/// - Important: Thread-safe.
final class RenderAnswer: Sendable {
    private let continuation: Mutex<CheckedContinuation<ImageResult, any Error>?>

    init(_ continuation: CheckedContinuation<ImageResult, any Error>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the continuation with `result` the first time; later calls do nothing.
    func resume(with result: Result<ImageResult, any Error>) {
        let taken = continuation.withLock { value -> CheckedContinuation<ImageResult, any Error>? in
            defer { value = nil }
            return value
        }
        taken?.resume(with: result)
    }
}
