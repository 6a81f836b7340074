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
}

/// The load task's `IncrementalDecoder`, made on first use.
///
/// - Important: `@unchecked Sendable` because it is only touched on the task's serial image queue
///   (`ImageLoadTask.imageQueue`), never concurrently; the decoder itself is not thread-safe.
final class IncrementalDecoderBox: @unchecked Sendable {
    var decoder: IncrementalDecoder?
    /// The last partial image made, so an unchanged one is not delivered twice.
    var lastImage: Image?
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
        let decoder: IncrementalDecoder
        if let existing = incremental.decoder {
            decoder = existing
        } else {
            var options = decodeOptions
            options.firstFrameOnly = true
            options.keepsOriginalData = false
            decoder = IncrementalDecoder(options: options)
            incremental.decoder = decoder
        }
        do {
            try decoder.update(bytes, isFinal: false)
        } catch {
            // Only refused after final data, which the progressive path never sends.
            return nil
        }
        let format = decoder.format
        guard format == .jpeg || format == .png || format == .gif else { return nil } // never WebP
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
}
