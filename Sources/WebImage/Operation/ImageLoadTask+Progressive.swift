import Dispatch
import Foundation
import ImageCodec

/// Partial-image state of a download with `.progressive` / `.progressiveBlur`.
struct ProgressiveState {
    var data = Data()
    var expectedLength: Int64?
    var lastDelivery: UInt64 = 0
    var isDecoding = false
    var deliveredCount = 0
}

extension ImageLoadTask {
    /// At most one partial image every 0.2 s (0.4 s with blur), as YYWebImage does.
    var partialInterval: Double { context.options.contains(.progressiveBlur) ? 0.4 : 0.2 }

    /// A chunk arrived (network thread): keep it, and decode a partial image on the image queue when the
    /// throttle allows and no partial decode is running.
    func didReceiveChunk(_ chunk: Data) {
        let now = DispatchTime.now().uptimeNanoseconds
        let interval = UInt64(partialInterval * 1e9)
        let snapshot = state.withLock { s -> (Data, Int64?, Int)? in
            s.progressive.data.append(chunk)
            guard !s.isDone, !s.progressive.isDecoding, now &- s.progressive.lastDelivery >= interval else { return nil }
            s.progressive.isDecoding = true
            return (s.progressive.data, s.progressive.expectedLength, s.progressive.deliveredCount)
        }
        guard let (data, expected, count) = snapshot else { return }
        imageQueue.async { [self] in
            let partial = makePartialImage(from: data, expected: expected, deliveredCount: count)
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

    /// The best image the bytes so far give, or `nil` (too little data, WebP, or — with blur — a format
    /// that is not a progressive JPEG or interlaced PNG).
    func makePartialImage(from data: Data, expected: Int64?, deliveredCount: Int) -> Image? {
        let format = ImageFormat.sniff(data)
        guard format == .jpeg || format == .png || format == .gif else { return nil } // never WebP
        let blur = context.options.contains(.progressiveBlur)
        if blur {
            guard format != .gif, let info = try? ImageDecoder.info(data), info.isProgressive else { return nil }
        }
        var options = decodeOptions
        options.firstFrameOnly = true
        options.keepsOriginalData = false
        guard let image = try? ImageDecoder.decode(data, options: options) else { return nil }
        guard blur else { return image }
        let radius = ProgressiveBlur.radius(receivedBytes: data.count, expectedBytes: expected.map { Int($0) },
                                            displayCount: deliveredCount + 1)
        guard radius > 0, let blurred = try? image.firstFrame.buffer.blurred(radius: radius) else { return image }
        return Image(buffer: blurred, format: image.format)
    }
}
