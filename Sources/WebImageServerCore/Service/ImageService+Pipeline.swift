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
        try await produce(source: options.source, key: key, deadline: deadline) { [self] data in
            // Watermarks: loaded as sources are (policy, limits, caches, coalescing), after the image itself.
            var watermarks: [URL: Data] = [:]
            for url in options.watermarkURLs where watermarks[url] == nil {
                watermarks[url] = try await sourceBytes(for: url, deadline: deadline).data
            }
            return try await render(data, options: options, candidates: candidates, watermarks: watermarks)
        }
    }

    /// What every result's pipeline does around its own work (`make`, given the source's bytes): takes a
    /// concurrency slot (or throws `.saturated`), loads the source, forgets bytes that turn out not to be an image,
    /// stores the result, and names the tier the source came from.
    func produce(source url: URL, key: String, deadline: ContinuousClock.Instant,
                 make: (Data) async throws -> ImageResult) async throws -> (result: ImageResult, tier: ResultTier) {
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

        let source = try await sourceBytes(for: url, deadline: deadline)
        let result: ImageResult
        do {
            result = try await make(source.data)
        } catch ImageServiceError.notAnImage(let message) {
            forgetSource(url)
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
    func forgetSource(_ url: URL) {
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
    func sourceBytes(for url: URL, deadline: ContinuousClock.Instant) async throws -> (data: Data, source: ImageSource) {
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
    private func render(_ data: Data, options: ImageRequestOptions, candidates: [ImageFormat],
                        watermarks: [URL: Data]) async throws -> ImageResult {
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
            let planAndRun: @Sendable (SourceCrop?) -> Void = { [self] trimmed in
                let plan: RenderPlan
                do {
                    plan = try RenderPlan(data: data, options: options, candidates: candidates, configuration: configuration,
                                          trimmed: trimmed)
                } catch {
                    finish(.failure(error))
                    return
                }
                reserveAndRun(plan, data: data, watermarks: watermarks, deadline: deadline, finish: finish)
            }
            renderQueue.async { [self] in
                guard let trim = options.trim else { return planAndRun(nil) }
                // The trim's box comes from the pixels: found first, within its own reservation, then the render is
                // planned from the trimmed size (ImageService+Trim).
                findTrim(trim, in: data, deadline: deadline) { result in
                    switch result {
                    case .success(let box): planAndRun(box)
                    case .failure(let error): finish(.failure(error))
                    }
                }
            }
        }
    }

    /// Runs `plan` once the decode budget has room for its peak, then hands its result to `finish`. A lossless JPEG
    /// recompression reserves only its own cost; when libjxl refuses the JPEG, the render is planned again to
    /// encode the pixels and reserves that cost in turn (reserving both at once held 1.14 GB for a 4096² JPEG
    /// whose recompression grew the resident memory by 250 MB: RenderBudgetAccountingTests).
    private func reserveAndRun(_ requested: RenderPlan, data: Data, watermarks: [URL: Data], deadline: ContinuousClock.Instant?,
                               finish: @escaping @Sendable (Result<ImageResult, any Error>) -> Void) {
        var checked = requested
        // Lossless recompression copies the JPEG's segments: its EXIF (a camera's position), XMP, comments and ICC
        // profile (the DCT coefficients stay in the file's colour space), where every other output is untagged sRGB
        // without metadata (docs/colour.md). Such a JPEG's pixels are encoded instead.
        if checked.recompressesJPEG, JPEGMetadataSegments.carriesMetadata(data) { checked.recompressesJPEG = false }
        let plan = checked
        // The peak of the whole render, not only its decode: the decoded source, every buffer shaping
        // makes (a blur's working plane is twice its output), every output frame the encoder holds
        // until it encodes (up to 800 MB for 200 Mpx of animation) and the encoder's own buffers
        // (RenderCost; AnimatedOutputBudgetTests, RenderBudgetAccountingTests).
        var cost = plan.recompressesJPEG ? plan.recompressionCost.peak(decodeCost: 0)
            : plan.cost.peak(decodeCost: DecodeBudget.estimatedCost(of: data, options: plan.decodeOptions))
        // A watermark is decoded whole and held (with a resized and a drawn copy) through the render.
        for mark in watermarks.values {
            let markCost = DecodeBudget.estimatedCost(of: mark, options: plan.watermarkDecodeOptions)
            let (triple, overflow) = markCost.multipliedReportingOverflow(by: 3)
            let (sum, sumOverflow) = cost.addingReportingOverflow(overflow ? .max : triple)
            cost = overflow || sumOverflow ? .max : sum
        }
        let started = Mutex(false)
        _ = manager.decodeBudget.run(cost: cost, on: renderQueue) { [self] reservation in
            started.withLock { $0 = true }
            // Released before the result goes on: the render's buffers are gone once `run` returns, and
            // a response (or a test reading the budget after it) must not see them still reserved.
            let result = Result(catching: { try self.run(plan, data: data, watermarks: watermarks, deadline: deadline) })
            reservation.release()
            if case .failure(let error) = result, error is RecompressionRefused {
                var pixels = plan
                pixels.recompressesJPEG = false
                reserveAndRun(pixels, data: data, watermarks: watermarks, deadline: deadline, finish: finish)
                return
            }
            finish(result)
        }
        if !started.withLock({ $0 }) { metrics.decodeBudgetWait() }
    }

    private func run(_ plan: RenderPlan, data: Data, watermarks: [URL: Data], deadline: ContinuousClock.Instant?) throws -> ImageResult {
        // A render that waited for the budget past its deadline has been answered already: it does no work.
        try Self.check(deadline)
        var encodeOptions = EncodeOptions(quality: Double(plan.quality) / 100, deadline: deadline,
                                          automaticQuality: plan.automaticQuality, effort: configuration.encodeEffort)
        if let tables = plan.jpegQuantization { encodeOptions.jpegQuantization = tables }
        if plan.recompressesJPEG {
            do {
                let body = try JXLEncoder.recompressJPEG(data, options: encodeOptions)
                counts.withLock { $0.encodes += 1 }
                return result(body, format: .jpegXL)
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
        var marks: [String: PixelBuffer] = [:]
        for (url, bytes) in watermarks {
            do {
                let mark = try ImageDecoder.decode(bytes, options: plan.watermarkDecodeOptions)
                marks[url.absoluteString] = try mark.firstFrame.buffer.applyingOrientation(mark.orientation)
            } catch {
                // thumbor answers 400 for a watermark it cannot load.
                throw ImageServiceError.badOptions("filter watermark: \(url.absoluteString.prefix(80)) is not an image (\(error))")
            }
        }
        counts.withLock { $0.decodes += 1 }
        try Self.check(deadline)
        let frames = plan.animates ? try codec { try image.allFrames() } : [image.firstFrame]
        var shaped: [(buffer: PixelBuffer, duration: Double)] = []
        // One crop window for every frame (chosen on the first): a window that moved between frames would shake.
        var window: (x: Int, y: Int)?
        for frame in frames {
            try Self.check(deadline)
            shaped.append((try shape(frame.buffer, orientation: image.orientation, plan: plan, watermarks: marks, window: &window),
                           frame.duration))
        }
        let encode = { [self] (quality: Int) throws -> Data in
            try Self.check(deadline)
            var options = encodeOptions
            options.quality = Double(quality) / 100
            // `max_bytes`' smaller tries are fixed qualities, below what an automatic search chose.
            if quality != plan.quality { options.automaticQuality = nil }
            var encoder = ImageEncoder(format: plan.format, loopCount: image.loopCount, options: options)
            for frame in shaped { encoder.addFrame(frame.buffer, duration: frame.duration) }
            let body = try codec { try encoder.encode() }
            counts.withLock { $0.encodes += 1 }
            return body
        }
        var body = try encode(plan.quality)
        // thumbor's `max_bytes`: ¾ of the quality at a time while too large, giving up (the first encoding) under 10.
        if let maxBytes = plan.maxBytes, body.count > maxBytes, plan.format == .jpeg || plan.format == .webp {
            var quality = plan.quality
            var smaller = body
            while smaller.count > maxBytes {
                quality = quality * 3 / 4
                if quality < 10 { break }
                smaller = try encode(quality)
            }
            if smaller.count <= maxBytes { body = smaller }
        }
        return result(body, format: plan.format)
    }

    private func result(_ body: Data, format: ImageFormat) -> ImageResult {
        let digest = SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined()
        return ImageResult(body: body, contentType: format.mimeType, etag: "\"\(digest)\"")
    }

    /// Throws `.renderTimeout` once `deadline` has passed.
    static func check(_ deadline: ContinuousClock.Instant?) throws(ImageServiceError) {
        if let deadline, ContinuousClock.now >= deadline { throw .renderTimeout(seconds: 0) }
    }

    /// Where the picture starts in an oriented decode shrunk on load by `factor` (`RenderPlan.shrinkOnLoadFactor`):
    /// such a decode has `ceil(side / factor)` pixels per stored axis for `side / factor` of picture, its last stored
    /// row and column partly padding; an orientation that reverses an axis puts that pixel first, so the picture
    /// starts `padding / factor` into it on that oriented axis (0 on the others).
    static func shrunkPictureOrigin(factor: Int, orientedWidth: Int, orientedHeight: Int,
                                    orientation: ImageOrientation) -> (x: Double, y: Double) {
        guard factor > 1 else { return (0, 0) }
        let swaps = orientation.swapsDimensions
        let (storedWidth, storedHeight) = swaps ? (orientedHeight, orientedWidth) : (orientedWidth, orientedHeight)
        func padding(_ side: Int) -> Double { Double((side + factor - 1) / factor * factor - side) / Double(factor) }
        // Which oriented axes run against their stored axis (EXIF 2…8: mirror, rotate 180°, flip, transpose, rotate
        // 90° clockwise, transverse, rotate 90° counter-clockwise).
        let (reversesX, reversesY): (Bool, Bool)
        switch orientation {
        case .up, .leftMirrored: (reversesX, reversesY) = (false, false)
        case .upMirrored, .right: (reversesX, reversesY) = (true, false)
        case .down, .rightMirrored: (reversesX, reversesY) = (true, true)
        case .downMirrored, .left: (reversesX, reversesY) = (false, true)
        }
        // The oriented x axis is the stored y axis when the orientation swaps them.
        let (paddingX, paddingY) = swaps ? (padding(storedHeight), padding(storedWidth)) : (padding(storedWidth), padding(storedHeight))
        return (reversesX ? paddingX : 0, reversesY ? paddingY : 0)
    }

    /// Orientation, the source crop, the `cover` crop (of the part that scales to the output, placed by the plan's
    /// focus, or by the smart or entropy window), resize to the output size, blur, flips, then the output filters in
    /// order. `window` is the `cover` crop's origin: chosen on the first frame when `nil`, then reused.
    private func shape(_ buffer: PixelBuffer, orientation: ImageOrientation, plan: RenderPlan,
                       watermarks: [String: PixelBuffer], window: inout (x: Int, y: Int)?) throws -> PixelBuffer {
        let g = plan.geometry
        return try codec {
            var b = try buffer.applyingOrientation(orientation)
            if let box = plan.sourceWindow {
                // One window of the oriented source (thumbor's manual crop and `auto_crop` boxes, whole source pixels)
                // mapped onto the decoded buffer, then resized to the output in one resample: on a full-size decode
                // that is thumbor's crop then resize exactly; on a downsampled one the window keeps its fractional
                // edges instead of moving to the nearest decoded pixel (up to half an output pixel: SSIMULACRA2 48
                // against thumbor on kodak's manual crops, docs/thumbor-compat.md).
                let (sx, sy) = plan.shrinkOnLoadFactor.map { (1 / Double($0), 1 / Double($0)) }
                    ?? (Double(b.width) / Double(plan.orientedWidth), Double(b.height) / Double(plan.orientedHeight))
                let (ox, oy) = plan.shrinkOnLoadFactor.map {
                    Self.shrunkPictureOrigin(factor: $0, orientedWidth: plan.orientedWidth,
                                             orientedHeight: plan.orientedHeight, orientation: orientation)
                } ?? (0, 0)
                let (x, y) = (Double(box.left) * sx + ox, Double(box.top) * sy + oy)
                let (w, h) = (Double(box.right - box.left) * sx, Double(box.bottom - box.top) * sy)
                let whole = [x, y, w, h].allSatisfy { abs($0 - $0.rounded()) < 1e-6 }
                if whole {
                    let (ix, iy, iw, ih) = (Int(x.rounded()), Int(y.rounded()), Int(w.rounded()), Int(h.rounded()))
                    if ix != 0 || iy != 0 || iw != b.width || ih != b.height {
                        b = try b.cropped(x: ix, y: iy, width: max(1, iw), height: max(1, ih))
                    }
                    if b.width != g.outputWidth || b.height != g.outputHeight {
                        b = try b.resized(width: g.outputWidth, height: g.outputHeight)
                    }
                } else {
                    b = try b.resized(width: g.outputWidth, height: g.outputHeight, fromX: x, y: y,
                                      sourceWidth: min(w, Double(b.width) - x), sourceHeight: min(h, Double(b.height) - y))
                }
            } else if let crop = plan.sourceCrop {
                // In the decoded buffer's pixels: a downsampled decode is smaller than the source by `scale`.
                let scale = Double(b.width) / Double(plan.orientedWidth)
                let x = Int((Double(crop.left) * scale).rounded(.down)), y = Int((Double(crop.top) * scale).rounded(.down))
                let right = Int((Double(crop.right) * scale).rounded(.up)), bottom = Int((Double(crop.bottom) * scale).rounded(.up))
                b = try b.cropped(x: x, y: y, width: max(1, right - x), height: max(1, bottom - y))
            }
            if plan.sourceWindow == nil, g.scaledWidth != g.outputWidth || g.scaledHeight != g.outputHeight {
                // Crop first, in the buffer's own pixels, the part that scales to the output: scaling the whole
                // image then cropping would make a cover of an extreme aspect ratio allocate up to 16384² pixels
                // (1000 × 1 into 1 × 512: 512,000 × 512, 1 GiB) for a few hundred pixels of output. The gravity
                // places it in the oriented frame (its fractions and focal point are of the oriented source).
                let (width, height) = RenderPlan.cropSize(of: (b.width, b.height), geometry: g)
                let origin: (x: Int, y: Int)
                if let window {
                    origin = window
                } else if let strategy = plan.cropStrategy {
                    origin = b.cropWindow(width: width, height: height, strategy: strategy)
                } else {
                    origin = RenderPlan.cropOrigin(size: (b.width, b.height), window: (width, height),
                                                   source: plan.croppedSourceSize, geometry: g, focus: plan.focus)
                }
                window = origin
                b = try b.cropped(x: origin.x, y: origin.y, width: width, height: height)
            }
            if b.width != g.outputWidth || b.height != g.outputHeight {
                b = try b.resized(width: g.outputWidth, height: g.outputHeight)
            }
            if plan.blur > 0 { b = try b.blurred(radius: plan.blur) }
            if plan.flipsHorizontally { b = try b.flippedHorizontally() }
            if plan.flipsVertically { b = try b.flippedVertically() }
            for filter in plan.filters {
                b = try OutputFilters.apply(filter, to: b, box: plan.box, watermarks: watermarks)
            }
            return b
        }
    }

    /// Runs `body`, turning codec and processing errors into service errors.
    func codec<T>(_ body: () throws -> T) throws -> T {
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
    var automaticQuality: QualityTarget?
    /// The request's JPEG tables (`ImageRequestOptions.jpegQuantization`), `nil` for the encoder's default.
    var jpegQuantization: JPEGQuantization?
    var blur: Double
    /// The source crop, clamped, in the oriented source's pixels; `nil` for none.
    var sourceCrop: SourceCrop?
    /// The oriented source's size (the crop's frame of reference).
    var orientedWidth: Int
    var orientedHeight: Int
    /// The oriented source's size after `sourceCrop` (the `cover` crop's frame of reference).
    var croppedSourceSize: (width: Int, height: Int)
    /// Where a `cover` crop is centred, in 0…1 of the (cropped) source: the focal point, or the anchor
    /// (smart and entropy: the centre, until they are computed).
    var focus: (x: Double, y: Double)
    /// The requested box after `orig`, clamping and swapping (0 where a side was not asked for): `fill` and
    /// `upscale` reach it.
    var box: (width: Int, height: Int)
    var flipsHorizontally: Bool
    var flipsVertically: Bool
    var filters: [OutputFilter]
    var maxBytes: Int?
    /// How a watermark is decoded: its first frame, within the source limits.
    var watermarkDecodeOptions: DecodeOptions
    /// The part of the oriented source that becomes the output, in its pixels, for every crop placed by geometry
    /// alone (no smart or entropy window): the manual crop (or the whole source), and within it, for a `cover` that
    /// crops, thumbor's `auto_crop` box around `focus`. `nil` with a smart or entropy window (chosen from the pixels).
    var sourceWindow: SourceCrop?
    /// The smart or entropy window's strategy (chosen from the pixels); `nil` for the anchors, focal points and
    /// thumbor's focal regions, placed by `focus` as thumbor places them.
    var cropStrategy: CropWindowStrategy?
    /// The factor of a decode shrunk on load only (`DecodeOptions.resizesToFit` false: a JPEG's DCT denominator, a
    /// PNG's block size), whose `ceil(side / d)` pixels hold `side / d` of picture: the window maps onto it by exactly
    /// `1 / d`.
    var shrinkOnLoadFactor: Int?
    /// The memory the render holds at its peak besides its decode (reserved in the decode budget with it).
    var cost: RenderCost
    /// The memory a lossless JPEG recompression holds (reserved instead of `cost` while `recompressesJPEG`).
    var recompressionCost = RenderCost(jpegRecompressionOf: 0, sourceBytes: 0)

    /// The plan for `data` with `options`. `trimmed` is the box `options.trim` found on the decoded pixels (in the
    /// oriented source's pixels; `nil` without a trim, or when the trim is ignored): the source is then that box, and
    /// the manual crop keeps what of it lies inside.
    init(data: Data, options: ImageRequestOptions, candidates: [ImageFormat], configuration: ImageServiceConfiguration,
         trimmed: SourceCrop? = nil) throws(ImageServiceError) {
        let info: ImageInfo
        do { info = try ImageDecoder.info(data) } catch let error as ImageCodecError { throw ImageServiceError(error) } catch {
            throw .notAnImage("\(error)")
        }
        // An animation the options keep: thumbor URLs keep a GIF's only (`keepsAnimationOfGIFOnly`).
        let animated = info.frameCount > 1 && (!options.keepsAnimationOfGIFOnly || info.format == .gif)
        let (w, h) = info.orientation.swapsDimensions ? (info.height, info.width) : (info.width, info.height)
        // Source limits (pixels, frames) are the decoder's: it checks them from the header before allocating,
        // and for a downsampled decode on what it allocates.
        (orientedWidth, orientedHeight) = (w, h)
        if let trimmed {
            // thumbor shifts the manual crop by the trim's origin and clamps it to the trimmed image (an empty one is
            // ignored); both compose into one box of the oriented source.
            let (tw, th) = (trimmed.right - trimmed.left, trimmed.bottom - trimmed.top)
            let inner = options.sourceCrop.flatMap {
                SourceCrop(left: $0.left - trimmed.left, top: $0.top - trimmed.top, right: $0.right - trimmed.left,
                           bottom: $0.bottom - trimmed.top).clamped(width: tw, height: th)
            }
            sourceCrop = inner.map {
                SourceCrop(left: $0.left + trimmed.left, top: $0.top + trimmed.top, right: $0.right + trimmed.left,
                           bottom: $0.bottom + trimmed.top)
            } ?? trimmed
        } else {
            sourceCrop = options.sourceCrop?.clamped(width: w, height: h)
        }
        let (cw, ch) = sourceCrop.map { ($0.right - $0.left, $0.bottom - $0.top) } ?? (w, h)
        croppedSourceSize = (cw, ch)
        var (tw, th) = (options.width, options.height)
        // thumbor's `no_upscale()` clamps to the whole source, before its manual crop.
        if options.clampsBoxToSource { (tw, th) = (tw.map { min($0, w) }, th.map { min($0, h) }) }
        if options.widthIsOriginal { tw = cw }
        if options.heightIsOriginal { th = ch }
        if options.swapsBoxToMatchSource, let bw = tw, let bh = th, (cw < ch && bw > bh) || (cw > ch && bw < bh) {
            (tw, th) = (bh, bw)
        }
        box = (tw ?? 0, th ?? 0)
        geometry = OutputGeometry(sourceWidth: cw, sourceHeight: ch, targetWidth: tw, targetHeight: th,
                                  fit: options.fit, allowsUpscale: options.allowsUpscale)
        focus = Self.focus(options: options, crop: sourceCrop, size: (cw, ch))
        flipsHorizontally = options.flipsHorizontally
        flipsVertically = options.flipsVertically
        filters = options.filters
        maxBytes = options.maxBytes
        let outputPixels = geometry.outputWidth * geometry.outputHeight
        // `fill` and `upscale` reach the box, which may be larger than the output.
        let filterPixels = filters.contains { if case .fill = $0 { return true }; return $0 == .upscale }
            ? max(outputPixels, max(box.width, geometry.outputWidth) * max(box.height, geometry.outputHeight)) : outputPixels
        guard filterPixels <= configuration.maximumOutputPixels, filterPixels <= PixelBuffer.maxProcessedPixelCount else {
            throw .pixelLimit("output \(max(box.width, geometry.outputWidth))×\(max(box.height, geometry.outputHeight)) is over "
                              + "the maximum of \(configuration.maximumOutputPixels) pixels")
        }
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
                                                loopCount: info.loopCount, sourceFormat: info.format,
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
        // With a crop (manual, or a `cover` that crops) the window is resampled from the decode once more: the
        // whole source is decoded at twice the output's scale (at most its own size; for a JPEG, no larger IDCT than
        // the output's scale takes), so that last resample is a shrink, not a re-interpolation at a fractional offset
        // (which softened the crop against thumbor's single resize of the full-size crop).
        // (A smart or entropy window is chosen on the decode and cut on its whole pixels, as before: its decode is
        // the output's scale.)
        var decodePixelSize = geometry.decodePixelSize
        // A decode shrunk on load only (`DecodeOptions.resizesToFit` false: a JPEG's DCT scaling, a PNG's blocks): its
        // size and factor.
        var shrunkDecode: (width: Int, height: Int, factor: Int)?
        let windowFromPixels: Bool
        switch options.gravity {
        case .smart, .entropy: windowFromPixels = options.focalRegions.isEmpty
        default: windowFromPixels = false
        }
        if windowFromPixels {
            if sourceCrop != nil {
                let scale = max(Double(geometry.scaledWidth) / Double(cw), Double(geometry.scaledHeight) / Double(ch))
                decodePixelSize = scale < 1 ? Int((Double(max(w, h)) * scale).rounded(.up)) : nil
            }
        } else if sourceCrop != nil || geometry.scaledWidth != geometry.outputWidth || geometry.scaledHeight != geometry.outputHeight {
            let scale = max(Double(geometry.scaledWidth) / Double(cw), Double(geometry.scaledHeight) / Double(ch))
            let longest = max(w, h)
            let atOutputScale = Int((Double(longest) * scale).rounded(.up))
            // Whether a full-size decode is within the decode limits (a downsampled decode checks only what it
            // allocates, so a larger source can still be read downsampled).
            let pixels = info.width.multipliedReportingOverflow(by: info.height)
            let fullSizeFits = !pixels.overflow && pixels.partialValue <= configuration.decodeLimits.maxPixelsPerFrame
            if info.format == .jpeg, scale < 1, !animates {
                // Shrink-on-load only: the DCT-scaled image is resampled once, by the window's resize (an exact
                // downsampled decode first was a second Lanczos3, clamped to 8 bits in between). Asked for the
                // output's scale, the decoder's own margin leaves it at least 2× the output (libvips' margin).
                // Twice that (4×) scored 0.5–3 SSIMULACRA2 points higher on some photographs
                // (elementary_Photo_by_SpaceX at 400×300: 96.9 at 1/2, 100 at full size; thumbor 97.4) but decodes
                // up to 4× the pixels: the cold 400×300 crop of a 2000 px JPEG fell from 207 to 132 req/s and the
                // cold WebP crop to 2.9× thumbor's, under the service's 3× goal (docs/quality.md).
                let request = atOutputScale
                // libjpeg's scaled size is ceil(side / d): the decoder's own denominator maps the window exactly.
                let d = JPEGDecoder.thumbnailScaleDenominator(width: info.width, height: info.height, maxPixelSize: request)
                if d > 1 {
                    decodePixelSize = request
                    shrunkDecode = ((info.width + d - 1) / d, (info.height + d - 1) / d, d)
                } else {
                    decodePixelSize = nil
                }
            } else if info.format == .png, !info.isProgressive, !animates, scale < 1, fullSizeFits
                        || PNGDecoder.shrinkOnLoadFactor(width: info.width, height: info.height, maxPixelSize: 2 * atOutputScale) > 1 {
                // A non-interlaced PNG shrinks on load by whole blocks (at least 4× the output's scale, as a JPEG),
                // resampled once by the window's resize: what one resize of the full decode does (`BoxPrefilter`).
                // Without a block of 2 it decodes at full size (a 1400 px chart into 400×300).
                let request = 2 * atOutputScale
                let f = PNGDecoder.shrinkOnLoadFactor(width: info.width, height: info.height, maxPixelSize: request)
                if f > 1 {
                    decodePixelSize = request
                    shrunkDecode = ((info.width + f - 1) / f, (info.height + f - 1) / f, f)
                } else {
                    decodePixelSize = nil
                }
            } else {
                // Other formats downsample with an exact Lanczos3, so the window's resize makes it a second one:
                // worth it (memory) only when the decode shrinks by 2 or more, at twice the output's scale; a
                // milder shrink decodes at full size, for one resample — unless the full size is over the decode
                // limits (a source only a downsampled decode may read: a downsampled decode checks only what it
                // allocates), where the two resamples stay.
                let side = 2 * atOutputScale
                decodePixelSize = 2 * side <= longest || (!fullSizeFits && side < longest) ? side : nil
            }
        }
        watermarkDecodeOptions = DecodeOptions(limits: configuration.decodeLimits, preloadAllFrames: false,
                                               firstFrameOnly: true, keepsOriginalData: false, maxPixelSize: nil)
        decodeOptions = DecodeOptions(limits: configuration.decodeLimits, preloadAllFrames: animates,
                                      firstFrameOnly: !animates, keepsOriginalData: false,
                                      maxPixelSize: animates ? nil : decodePixelSize, resizesToFit: shrunkDecode == nil)
        shrinkOnLoadFactor = shrunkDecode?.factor
        quality = options.quality
        automaticQuality = options.automaticQuality
        jpegQuantization = options.jpegQuantization
        blur = options.blur
        // Smart and entropy windows come from the pixels, unless thumbor's focal regions placed the crop.
        switch options.gravity {
        case .smart where options.focalRegions.isEmpty, .entropy where options.focalRegions.isEmpty: cropStrategy = options.gravity.cropWindowStrategy
        default: cropStrategy = nil
        }
        if cropStrategy == nil {
            let frame = sourceCrop ?? SourceCrop(left: 0, top: 0, right: w, bottom: h)
            let crops = geometry.scaledWidth != geometry.outputWidth || geometry.scaledHeight != geometry.outputHeight
            sourceWindow = crops ? Self.autoCrop(frame: frame, output: (geometry.outputWidth, geometry.outputHeight), focus: focus)
                : frame
        }
        // Lossless recompression only for the JPEG as it is: no resize, crop, blur, rotation, flip or filter.
        recompressesJPEG = format == .jpegXL && info.format == .jpeg && info.frameCount == 1 && info.orientation == .up
            && options.blur == 0 && geometry.outputWidth == info.width && geometry.outputHeight == info.height
            && geometry.scaledWidth == info.width && geometry.scaledHeight == info.height
            && info.width * info.height <= configuration.decodeLimits.maxPixelsPerFrame
            && sourceCrop == nil && filters.isEmpty && !flipsHorizontally && !flipsVertically && maxBytes == nil
        // The frames decoded: every frame at canvas size for a kept animation, else the first frame at the size
        // the downsampled decode gives (`PixelBuffer.fittingSize` of the stored size).
        let decoded = animates || decodePixelSize == nil ? (info.width, info.height)
            : shrunkDecode.map { ($0.width, $0.height) }
            ?? PixelBuffer.fittingSize(width: info.width, height: info.height, maxPixelSize: decodePixelSize!)
        cost = RenderCost(inputWidth: decoded.0, inputHeight: decoded.1, frames: animates ? info.frameCount : 1,
                          orientation: info.orientation, geometry: geometry, blur: blur,
                          outputFrames: animates ? info.frameCount : 1, format: format,
                          filterPixels: filters.isEmpty && !flipsHorizontally && !flipsVertically && sourceCrop == nil ? 0 : filterPixels,
                          effort: configuration.encodeEffort)
        if maxBytes != nil { cost.encodingBytes = cost.encodingBytes.multipliedReportingOverflow(by: 2).overflow ? .max : cost.encodingBytes * 2 }
        // A scored `q=auto` search holds the metric's references and candidates while it encodes (three references
        // for a transparent image); `max_bytes`' smaller tries after it are fixed qualities, so it is not doubled.
        if let target = automaticQuality, target.check == .scored {
            cost.addScoredSearch(outputPixels: geometry.outputWidth * geometry.outputHeight, format: format,
                                 effort: configuration.encodeEffort)
        }
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

    /// Where a `cover` window of `window` sits in a (decoded, oriented, source-cropped) frame of `size`: centred on
    /// `focus` (0…1) as far as the frame allows, placed as thumbor's `auto_crop` places it in the `source` frame
    /// (its focus floored, as its centre of mass divides with `//`; its origin rounded half to even, Python's
    /// `round`), then scaled to the frame: a downsampled decode lands where thumbor's full-size one does.
    static func cropOrigin(size: (width: Int, height: Int), window: (width: Int, height: Int),
                           source: (width: Int, height: Int), geometry g: OutputGeometry,
                           focus: (x: Double, y: Double)) -> (x: Int, y: Int) {
        func origin(_ side: Int, _ window: Int, _ source: Int, _ output: Int, _ scaled: Int, _ f: Double) -> Int {
            guard side > window else { return 0 }
            let sourceWindow = min(Double(source), (Double(output) * Double(source) / Double(max(scaled, 1))).rounded())
            let slack = max(Double(source) - sourceWindow, 0)
            let at = min(max((f * Double(source)).rounded(.down) - sourceWindow / 2, 0), slack).rounded(.toNearestOrEven)
            let scaledOrigin = Int((at * Double(side) / Double(max(source, 1))).rounded())
            return min(max(scaledOrigin, 0), side - window)
        }
        return (origin(size.width, window.width, source.width, g.outputWidth, g.scaledWidth, focus.x),
                origin(size.height, window.height, source.height, g.outputHeight, g.scaledHeight, focus.y))
    }

    /// thumbor's `auto_crop` box (thumbor/transformer.py) in `frame` (the manually cropped source, in source pixels)
    /// for an `output` of another aspect ratio: the whole of one side, the other `output`'s aspect ratio of it
    /// (a width rounded up then half to even, a height half to even, as thumbor's `ceil` and `round`), placed around
    /// `focus` (its pixel floored, as thumbor's centre of mass divides with `//`) as far as the frame allows, the
    /// origin rounded half to even (Python's `round`).
    static func autoCrop(frame: SourceCrop, output: (width: Int, height: Int), focus: (x: Double, y: Double)) -> SourceCrop {
        let (width, height) = (Double(frame.right - frame.left), Double(frame.bottom - frame.top))
        let (tw, th) = (Double(max(output.width, 1)), Double(max(output.height, 1)))
        var (cw, ch) = (width, height)
        if tw / width > th / height {
            ch = min(max((width * th / tw).rounded(.toNearestOrEven), 1), height)
        } else {
            cw = min(max((tw * height / th).rounded(.up), 1), width)
        }
        func origin(_ f: Double, _ side: Double, _ window: Double) -> Int {
            let focal = (f * side + 1e-9).rounded(.down)
            return Int(min(max(focal - window / 2, 0), side - window).rounded(.toNearestOrEven))
        }
        let (x, y) = (origin(focus.x, width, cw), origin(focus.y, height, ch))
        return SourceCrop(left: frame.left + x, top: frame.top + y, right: frame.left + x + Int(cw), bottom: frame.top + y + Int(ch))
    }

    /// The crop's focus: the weighted centre of the focal regions inside the source crop (weight: area, as
    /// thumbor's), else the focal point or anchor of `gravity`, else the centre.
    static func focus(options: ImageRequestOptions, crop: SourceCrop?, size: (width: Int, height: Int)) -> (x: Double, y: Double) {
        let (left, top) = (crop?.left ?? 0, crop?.top ?? 0)
        var (sumX, sumY, weight) = (0.0, 0.0, 0.0)
        for region in options.focalRegions {
            let (cx, cy) = (Double(region.left + region.right) / 2, Double(region.top + region.bottom) / 2)
            if let crop, cx < Double(crop.left) || cx > Double(crop.right) || cy < Double(crop.top) || cy > Double(crop.bottom) {
                continue
            }
            let area = max(1, abs(Double(region.right - region.left) * Double(region.bottom - region.top)))
            (sumX, sumY, weight) = (sumX + (cx - Double(left)) * area, sumY + (cy - Double(top)) * area, weight + area)
        }
        if weight > 0 {
            return (min(max(sumX / weight / Double(size.width), 0), 1), min(max(sumY / weight / Double(size.height), 0), 1))
        }
        switch options.gravity {
        case .anchor(let anchor): return anchor.fractions
        case .focalPoint(let x, let y): return (x, y)
        case .smart, .entropy: return (0.5, 0.5)
        }
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
