import Dispatch
import Foundation
import ImageCodec

/// Partial-image state of a download with `.progressive` / `.progressiveBlur`.
struct ProgressiveState {
    /// Bytes received but not yet given to the incremental decoder.
    var pending = Data()
    var expectedLength: Int64?
    var lastDelivery: UInt64 = 0
    var isDecoding = false
    var deliveredCount = 0
    /// No more partial images (`ImageLoadTask.closePartialImages`): chunks are no longer kept.
    var isClosed = false
}

/// The load task's `IncrementalDecoder`, made on first use.
///
/// - Important: `@unchecked Sendable` because it is only touched on the task's serial image queue
///   (`ImageLoadTask.imageQueue`), never concurrently; the decoder itself is not thread-safe.
final class IncrementalDecoderBox: @unchecked Sendable {
    var decoder: IncrementalDecoder?
    /// The last partial image made, so an unchanged one is not delivered twice.
    var lastImage: Image?
    /// Bytes kept until their header tells what the partial decoder's bitmap costs (no decoder before that).
    var headerBytes = Data()
    /// The decode budget held by the decoder's bitmap, from its creation until it is freed.
    var reservation: DecodeBudget.Reservation?
    /// No (more) partial images for this task: the budget had no room, the header never came, or the final
    /// decode began or the task ended (`closePartialImages`).
    var isClosed = false
}

extension ImageLoadTask {
    /// At most one partial image every 0.2 s (0.4 s with blur), as YYWebImage does.
    var partialInterval: Double { context.options.contains(.progressiveBlur) ? 0.4 : 0.2 }

    /// A chunk arrived (network thread): keep it, and when the throttle allows and no partial decode is
    /// running, hand the bytes received since the last hand-over to the task's incremental decoder on the
    /// image queue and deliver the image it gives.
    func didReceiveChunk(_ chunk: Data) {
        let now = DispatchTime.now().uptimeNanoseconds
        let interval = UInt64(partialInterval * 1e9)
        let work = state.withLock { s -> (Data, Int64?, Int)? in
            guard !s.progressive.isClosed else { return nil }
            s.progressive.pending.append(chunk)
            guard !s.isDone, !s.progressive.isDecoding, now &- s.progressive.lastDelivery >= interval else { return nil }
            s.progressive.isDecoding = true
            defer { s.progressive.pending = Data() }
            return (s.progressive.pending, s.progressive.expectedLength, s.progressive.deliveredCount)
        }
        guard let (bytes, expected, count) = work else { return }
        imageQueue.async { [self] in
            let partial = makePartialImage(appending: bytes, expected: expected, deliveredCount: count)
            let subscribers = state.withLock { s -> [ImageOperation] in
                s.progressive.isDecoding = false
                s.progressive.lastDelivery = DispatchTime.now().uptimeNanoseconds
                guard partial != nil, !s.isDone else { return [] }
                s.progressive.deliveredCount += 1
                return Array(s.subscribers.values)
            }
            if let partial { for subscriber in subscribers { subscriber.deliverPartial(partial) } }
        }
    }

    /// Feeds `bytes` to the task's incremental decoder and returns the best image so far, or `nil` (too
    /// little data, WebP, an unchanged image, or — with blur — not a progressive JPEG or interlaced PNG).
    /// Runs on the image queue.
    func makePartialImage(appending bytes: Data, expected: Int64?, deliveredCount: Int) -> Image? {
        guard !incremental.isClosed, !isDone else { return nil }
        let decoder: IncrementalDecoder
        var input = bytes
        if let existing = incremental.decoder {
            decoder = existing
        } else {
            var options = decodeOptions
            options.firstFrameOnly = true
            options.keepsOriginalData = false
            incremental.headerBytes.append(bytes)
            guard let reservation = reservePartialBitmap(options: options) else { return nil }
            incremental.reservation = reservation
            input = incremental.headerBytes
            incremental.headerBytes = Data()
            decoder = IncrementalDecoder(options: options)
            incremental.decoder = decoder
        }
        do {
            try decoder.update(input, isFinal: false)
        } catch {
            // Only refused after final data, which the progressive path never sends.
            return nil
        }
        let format = decoder.format
        guard Self.partialFormats.contains(format) else { return nil } // never WebP
        let blur = context.options.contains(.progressiveBlur)
        if blur, format == .gif || !decoder.isProgressive { return nil }
        let image: Image?
        do {
            image = try decoder.makeImage()
        } catch {
            return nil  // partial data never throws; the final decode reports errors
        }
        guard let image, image !== incremental.lastImage else { return nil }
        incremental.lastImage = image
        guard blur else { return image }
        let radius = ProgressiveBlur.radius(receivedBytes: decoder.data.count, expectedBytes: expected.map { Int($0) },
                                            displayCount: deliveredCount + 1)
        guard radius > 0 else { return image }
        do {
            return Image(buffer: try image.firstFrame.buffer.blurred(radius: radius), format: image.format)
        } catch {
            return image
        }
    }

    /// Most bytes kept waiting for a header before a task gives up on partial images (a JPEG's EXIF and ICC
    /// segments come before its frame header, each up to 64 KB).
    static let partialHeaderLimit = 1 << 20
    /// The formats partial images are made of (never WebP, nor the registered codecs' formats).
    static let partialFormats: Set<ImageFormat> = [.jpeg, .png, .gif]

    /// The decode budget for the partial decoder's bitmap, once `incremental.headerBytes` hold a header:
    /// `nil` while it has not come (the bytes are kept), and for good (`isClosed`) when it never comes within
    /// `partialHeaderLimit`, declares an image past the limits, or the budget has no room for it now (partial
    /// images never wait for budget; the final decode does). Runs on the image queue.
    private func reservePartialBitmap(options: DecodeOptions) -> DecodeBudget.Reservation? {
        let header = incremental.headerBytes
        // What the incremental decoder reads before allocating (a GIF's `info` would wait for the whole file).
        guard let info = IncrementalDecoder.headerInfo(of: header) else {
            let format = ImageFormat.sniff(header)
            if header.count > Self.partialHeaderLimit || (format != .unknown && !Self.partialFormats.contains(format)) {
                closePartialImages()
            }
            return nil
        }
        // Formats and files that never give a partial image (see `makePartialImage`) get no decoder at all.
        let blur = context.options.contains(.progressiveBlur)
        guard Self.partialFormats.contains(info.format), !blur || (info.format != .gif && info.isProgressive) else {
            closePartialImages()
            return nil
        }
        // The incremental decoder keeps a full-size bitmap whatever `maxPixelSize` (a JPEG stream a second
        // one it alternates with), and a partial image may be one more (resized, or a copy): two full frames.
        let (pixels, overflow) = info.width.multipliedReportingOverflow(by: info.height)
        let (cost, costOverflow) = pixels.multipliedReportingOverflow(by: 2 * 4)
        guard !overflow, !costOverflow, (try? options.limits.check(width: info.width, height: info.height)) != nil,
              let reservation = context.decodeBudget.reserveForPartialImages(cost: cost) else {
            closePartialImages()
            return nil
        }
        return reservation
    }

    /// No more partial images: frees the partial decoder (its bitmap and the bytes it kept) and gives its
    /// budget back. Runs on the image queue: when the final decode begins, and after the task ends
    /// (`schedulePartialImagesClose`).
    func closePartialImages() {
        state.withLock { s in
            s.progressive.isClosed = true
            s.progressive.pending = Data()
        }
        incremental.isClosed = true
        incremental.decoder = nil
        incremental.lastImage = nil
        incremental.headerBytes = Data()
        incremental.reservation?.release()
        incremental.reservation = nil
    }

    /// Closes the partial images on the image queue (after any partial decode queued before), for a task that
    /// asked for them: its end, by a finish or the last caller's cancel, from any thread.
    func schedulePartialImagesClose() {
        guard context.options.contains(.progressive) || context.options.contains(.progressiveBlur) else { return }
        imageQueue.async { [self] in closePartialImages() }
    }
}
