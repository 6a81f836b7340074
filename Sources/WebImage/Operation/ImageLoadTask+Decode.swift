import Foundation
import ImageCodec
import KVCache

extension ImageLoadTask {
    /// The decode options the request's options ask for.
    var decodeOptions: DecodeOptions {
        var decode = DecodeOptions()
        // The variant fixed at request time (options + the cache's settings then): it names the memory key.
        if context.variant.isFirstFrameOnly { decode.firstFrameOnly = true }
        if context.variant.isStraightAlpha { decode.pixelFormat = .rgba8 }
        decode.maxPixelSize = context.thumbnailPixelSize
        // The encoded original is kept only where something may use it: a full-size, untransformed image (to
        // re-encode an animation without loss, to write the original out). A thumbnail or a transform's input
        // kept the whole file beside a few kilobytes of pixels (40 thumbnails counted 0.49 MB, held 28.7 MB).
        decode.keepsOriginalData = context.thumbnailPixelSize == nil && context.transform == nil
        decode.colorManagement = context.variant.colorManagement
        return decode
    }

    /// Decode, downsample, transform, store, complete, once the decode's bitmap fits the manager's
    /// `DecodeBudget` (waiting in its queue, without blocking, until then). Runs on an image queue.
    func decodeAndFinish(_ data: Data, source: ImageSource, metadata: ImageCacheMetadata, storesToDisk: Bool) {
        // The partial decoder's bitmap and budget go before the final decode asks for its own.
        if !incremental.isClosed { closePartialImages() }
        guard !isDone else { return }
        let cost = DecodeBudget.estimatedCost(of: data, options: decodeOptions)
        // The highest priority of the callers waiting now; later joins and cancels move it (attach/detach).
        let priority = state.withLock { $0.priority }
        let ticket = context.decodeBudget.run(cost: cost, priority: priority.rawValue,
                                              on: imageQueue) { [self] reservation in
            decodeAndFinish(data, source: source, metadata: metadata, storesToDisk: storesToDisk, reservation: reservation)
        }
        // A request cancelled while waiting leaves the budget's queue (see detach); re-check after publishing.
        if state.withLock({ s in s.decodeTicket = ticket; return s.isDone }) { ticket.cancel() }
    }

    private func decodeAndFinish(_ data: Data, source: ImageSource, metadata: ImageCacheMetadata, storesToDisk: Bool,
                                 reservation: DecodeBudget.Reservation) {
        var reservation = Optional(reservation)
        defer { reservation?.release() }
        guard !isDone else { return }
        var image: Image
        do {
            // With a thumbnail size the decoder downsamples itself (DecodeOptions.maxPixelSize).
            image = try ImageDecoder.decode(data, options: decodeOptions).withScale(metadata.scale)
        } catch {
            reservation?.release()
            let codecError = error as? ImageCodecError ?? .corruptData(format: ImageFormat.sniff(data), message: "\(error)")
            if source == .diskCache || source == .sharedCache, let cache = context.cache {
                // A corrupt entry heals itself: drop it and load from the network.
                WebImageLog.logger.warning("undecodable disk cache entry removed",
                                           metadata: ["url": "\(context.url)", "error": "\(codecError)"])
                let key = context.cacheKey
                let url = context.url
                if source == .sharedCache { cache.sharedTier?.removeValue(forKey: key, completion: nil) }
                cache.ioQueue.async {
                    do { try cache.diskCache?.removeObject(forKey: key) } catch {
                        WebImageLog.logger.error("could not remove corrupt entry", metadata: ["url": "\(url)", "error": "\(error)"])
                    }
                }
                fetch(revalidating: nil)
                return
            }
            WebImageLog.logger.debug("decode failed", metadata: ["url": "\(context.url)", "error": "\(codecError)"])
            // Listed for this variant only (see `start()`).
            if context.options.contains(.ignoreFailedURL) { context.failedDecodes.insert(context.memoryKey) }
            finish(image: nil, source: .none, error: .decodeFailed(codecError))
            return
        }
        if let transform = context.transform {
            guard let transformed = transform.apply(image, context.url) else {
                finish(image: nil, source: .none, error: .transformFailed(context.url))
                return
            }
            image = transformed
        }
        // The bitmap is decoded: the budget goes to the next decode before completions run.
        reservation?.release()
        reservation = nil
        if let cache = context.cache {
            cache.storeInMemory(image, forKey: context.memoryKey)
            // What `.useHTTPCache` needs to serve this image from memory while its original stays fresh.
            cache.freshness.record(metadata.http, forKey: context.cacheKey)
            // In the background: the request completes without waiting for its disk write.
            if storesToDisk { cache.storeOnDisk(data, forKey: context.cacheKey, metadata: metadata) }
            // Off the completion path: what came from the origin goes to the shared tier too (a shared hit is there already).
            if storesToDisk, source == .remote { cache.storeInSharedTier(data, forKey: context.cacheKey, metadata: metadata) }
        }
        finish(image: image, source: source, error: nil)
    }
}
