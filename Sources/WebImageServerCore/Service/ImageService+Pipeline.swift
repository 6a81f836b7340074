import Crypto
import Foundation
import ImageCodec
import WebImage
import WebImageSync

extension ImageService {
    /// The pipeline of one result, run once per key however many requests wait for it: concurrency slot →
    /// source bytes (coalesced per source) → render on the render queue within the decode budget → store.
    func makeResult(options: ImageRequestOptions, acceptsWebP: Bool, key: String,
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
            result = try await render(source.data, options: options, acceptsWebP: acceptsWebP)
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

    /// Decodes, shapes and encodes on the render queue, the decode waiting for the manager's decode budget.
    private func render(_ data: Data, options: ImageRequestOptions, acceptsWebP: Bool) async throws -> ImageResult {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ImageResult, any Error>) in
            renderQueue.async { [self] in
                let plan: RenderPlan
                do { plan = try RenderPlan(data: data, options: options, acceptsWebP: acceptsWebP, configuration: configuration) } catch {
                    continuation.resume(throwing: error)
                    return
                }
                // The peak of the whole render, not only its decode: the decoded source, every buffer shaping
                // makes (a blur's working plane is twice its output), every output frame the encoder holds
                // until it encodes (up to 800 MB for 200 Mpx of animation) and the encoder's own buffers
                // (RenderCost; AnimatedOutputBudgetTests, RenderBudgetAccountingTests).
                let cost = plan.cost.peak(decodeCost: DecodeBudget.estimatedCost(of: data, options: plan.decodeOptions))
                let started = Mutex(false)
                _ = manager.decodeBudget.run(cost: cost, on: renderQueue) { [self] reservation in
                    started.withLock { $0 = true }
                    // Released before the result goes on: the render's buffers are gone once `run` returns, and
                    // a response (or a test reading the budget after it) must not see them still reserved.
                    let result = Result(catching: { try self.run(plan, data: data) })
                    reservation.release()
                    continuation.resume(with: result)
                }
                if !started.withLock({ $0 }) { metrics.decodeBudgetWait() }
            }
        }
    }

    private func run(_ plan: RenderPlan, data: Data) throws -> ImageResult {
        let image: Image
        do { image = try ImageDecoder.decode(data, options: plan.decodeOptions) } catch let error as ImageCodecError {
            throw ImageServiceError(error)
        }
        counts.withLock { $0.decodes += 1 }
        let frames = plan.animates ? try codec { try image.allFrames() } : [image.firstFrame]
        var encoder = ImageEncoder(format: plan.format, loopCount: image.loopCount,
                                   options: EncodeOptions(quality: Double(plan.quality) / 100,
                                                          automaticQuality: plan.automaticQuality))
        for frame in frames {
            encoder.addFrame(try shape(frame.buffer, orientation: image.orientation, plan: plan), duration: frame.duration)
        }
        let body = try codec { try encoder.encode() }
        counts.withLock { $0.encodes += 1 }
        let digest = SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined()
        return ImageResult(body: body, contentType: plan.format.mimeType, etag: "\"\(digest)\"")
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
    var geometry: OutputGeometry
    var decodeOptions: DecodeOptions
    var animates: Bool
    var quality: Int
    var automaticQuality: QualityTarget?
    var blur: Double
    /// The memory the render holds at its peak besides its decode (reserved in the decode budget with it).
    var cost: RenderCost

    init(data: Data, options: ImageRequestOptions, acceptsWebP: Bool, configuration: ImageServiceConfiguration) throws(ImageServiceError) {
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
        // `auto` does not pick WebP for an output WebP cannot hold; an explicit format that cannot is a 422.
        let side = max(geometry.outputWidth, geometry.outputHeight)
        format = FormatNegotiation.outputFormat(requested: options.format,
                                                acceptsWebP: acceptsWebP && side <= Self.maximumSide(of: .webp),
                                                sourceHasAlpha: info.hasAlpha, keepsAnimation: options.keepsAnimation && animated)
        guard side <= Self.maximumSide(of: format) else {
            throw .pixelLimit("output \(geometry.outputWidth)×\(geometry.outputHeight) is over the \(format) maximum of "
                              + "\(Self.maximumSide(of: format)) pixels a side")
        }
        animates = options.keepsAnimation && animated && (format == .gif || format == .webp)
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
        automaticQuality = options.automaticQuality
        blur = options.blur
        // The frames decoded: every frame at canvas size for a kept animation, else the first frame at the size
        // the downsampled decode gives (`PixelBuffer.fittingSize` of the stored size).
        let decoded = animates || geometry.decodePixelSize == nil ? (info.width, info.height)
            : PixelBuffer.fittingSize(width: info.width, height: info.height, maxPixelSize: geometry.decodePixelSize!)
        cost = RenderCost(inputWidth: decoded.0, inputHeight: decoded.1, frames: animates ? info.frameCount : 1,
                          orientation: info.orientation, geometry: geometry, blur: blur,
                          outputFrames: animates ? info.frameCount : 1, format: format)
    }

    /// The centred crop `ImageService.shape` takes from a (decoded, oriented) frame of `size` before scaling:
    /// the part that scales to the output, in the frame's own pixels.
    static func cropSize(of size: (width: Int, height: Int), geometry g: OutputGeometry) -> (width: Int, height: Int) {
        func side(_ output: Int, _ scaled: Int, _ own: Int) -> Int {
            min(own, max(1, Int((Double(output) * Double(own) / Double(scaled)).rounded())))
        }
        return (side(g.outputWidth, g.scaledWidth, size.width), side(g.outputHeight, g.scaledHeight, size.height))
    }

    /// The longest side the built-in encoder of `format` writes: WebP 16,383 (`WEBP_MAX_DIMENSION`), JPEG 65,500
    /// (libjpeg's `JPEG_MAX_DIMENSION`), GIF 65,535 (16-bit fields), PNG 2³¹ − 1.
    static func maximumSide(of format: ImageFormat) -> Int {
        switch format {
        case .webp: return 16_383
        case .jpeg: return 65_500
        case .gif: return 65_535
        default: return Int(Int32.max)
        }
    }
}
