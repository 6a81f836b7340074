import Foundation
import ImageCodec
import WebImage

extension ImageService {
    /// Finds the box `trim` leaves of the source in `data` (thumbor's `trim`, `SourceTrim.boundingBox(of:)`), in
    /// the oriented source's pixels, and hands it to `completion` (`nil` when the trim is ignored: nothing would be
    /// left), or the error that stopped it.
    ///
    /// The box needs every pixel, so the first frame is decoded at full size, as thumbor decodes it, with straight
    /// alpha (thumbor's distance is on the stored RGBA: a transparent pixel keeps its colour). That decode is
    /// not free: the decoder refuses a header over the decode limits before allocating (the same 413/422 as any
    /// render), and the decode with its oriented copy is reserved in the manager's decode budget, like a render's
    /// peak, for as long as it is held; the reservation is released before `completion` runs, and the render then
    /// reserves its own (the trimmed source decoded again, downsampled where the output allows).
    ///
    /// - Important: Runs the decode on the render queue once the budget has room; `completion` runs there, once.
    func findTrim(_ trim: SourceTrim, in data: Data, deadline: ContinuousClock.Instant?,
                  completion: @escaping @Sendable (Result<SourceCrop?, any Error>) -> Void) {
        let info: ImageInfo
        do { info = try ImageDecoder.info(data) } catch let error as ImageCodecError {
            return completion(.failure(ImageServiceError(error)))
        } catch {
            return completion(.failure(ImageServiceError.notAnImage("\(error)")))
        }
        // Straight alpha, as thumbor reads PIL's pixels: premultiplied, a transparent pixel loses its colour and a
        // faint one its low bits, and the distance would no longer be thumbor's.
        let options = DecodeOptions(limits: configuration.decodeLimits, pixelFormat: .rgba8, preloadAllFrames: false,
                                    firstFrameOnly: true, keepsOriginalData: false, maxPixelSize: nil)
        var cost = DecodeBudget.estimatedCost(of: data, options: options)
        if info.orientation != .up {
            // `applyingOrientation` copies the frame.
            let (copy, overflow) = info.width.multipliedReportingOverflow(by: info.height * 4)
            let (sum, sumOverflow) = cost.addingReportingOverflow(copy)
            cost = overflow || sumOverflow ? .max : sum
        }
        manager.decodeBudget.run(cost: cost, on: renderQueue) { [self] reservation in
            let result = Result { () throws -> SourceCrop? in
                try Self.check(deadline)
                let image: Image
                do { image = try ImageDecoder.decode(data, options: options) } catch let error as ImageCodecError {
                    throw ImageServiceError(error)
                }
                counts.withLock { $0.decodes += 1 }
                try Self.check(deadline)
                let buffer = try codec { try image.firstFrame.buffer.applyingOrientation(image.orientation) }
                return trim.boundingBox(of: buffer)
            }
            reservation.release()
            completion(result)
        }
    }
}
