import Foundation

/// Decodes an image while its data arrives (YYImageDecoder's `updateData:final:`): append each chunk with
/// `update(_:isFinal:)`, ask for the best image so far with `makeImage()`.
///
/// ```swift
/// let decoder = IncrementalDecoder()
/// for chunk in chunks { try decoder.update(chunk, isFinal: false); show(try decoder.makeImage()) }
/// try decoder.update(Data(), isFinal: true)
/// let image = try decoder.makeImage()          // exactly ImageDecoder.decode(allBytes, options:)
/// ```
///
/// What "so far" gives, by format. JPEG, PNG and still WebP keep their library's state and resume it as
/// data arrives: no partial image decodes their data again from the start.
/// - Progressive JPEG: libjpeg's buffered-image mode: each new image shows the newest completed scan, a
///   sharper full image each time. A scan is rendered whole, so a new one is made only when the bytes
///   received have at least doubled since the previous image (otherwise `makeImage()` returns it again).
/// - Baseline JPEG: libjpeg reads the rows the data so far holds (`jpeg_read_scanlines` over a suspending
///   source, resumed on the next call); rows not yet decoded are transparent (not libjpeg's gray fill), and
///   `hasAlpha` is `true` while any are left.
/// - PNG: libpng's progressive reader (`png_process_data`) decodes each chunk as it is appended. Not
///   interlaced: the rows so far, the rest transparent. Adam7: after each completed pass a coarse full image
///   (each pass's pixels replicated over their block, libpng's "blocky" combine); rows the current pass has
///   not reached keep the previous pass's coarser pixels, rows no pass reached are transparent. An APNG shows
///   its default image while loading.
/// - GIF: the first frame once its data is complete (decoded from the start of the bytes so far, at most when
///   the bytes have doubled).
/// - Still WebP: libwebp's incremental decoder (`WebPIAppend`): the rows so far, the rest transparent.
///   Animated WebP: nothing until final.
/// Each new partial image costs a copy of the full-size pixels, so baseline JPEG and non-interlaced PNG make
/// one only when at least 1/8 of the rows are new since the previous one, and Adam7 PNG after pass 1 only
/// when a pass completes; `makeImage()` otherwise returns the previous image again (the decoding itself still
/// advances on every call or chunk). When a stream stops on bad data or on `options.limits`, PNG shows
/// nothing new until final; JPEG falls back to decoding the bytes so far (at most when they have doubled).
///
/// Formats of registered codecs (`ImageCodecRegistry`): the decoder that will decode the final data (the
/// registry's first match) makes the partial images through its `IncrementalImageDecoding` session when it
/// takes incomplete data, or there are none; a codec registered for a built-in format replaces the streams
/// above.
///
/// Once the data is final, `makeImage()` returns exactly what `ImageDecoder.decode(allBytes, options:)`
/// returns (same pixels, same metadata, same errors); truncated or corrupt data never crashes.
/// `options.maxPixelSize` applies to partial images too (they are resized). Partial images are colour-managed like
/// the final image (the same plan, after any resize; CMYK previews keep the profile-less formula), and the final
/// image is exactly the one-shot decode's (a CMYK JPEG with a profile gets its final image from the one-shot decode).
///
/// - Important: Not thread-safe: one owner feeds it and asks for images from one thread (or serial queue)
///   at a time. Memory: the decoder keeps a copy of all bytes received, plus one full-size buffer for the
///   PNG or JPEG stream (checked against `options.limits` from the header before it is allocated) and, for
///   JPEG once partial images were made, a second one it alternates with.
public final class IncrementalDecoder {
    /// The decode options used for every image (limits, pixel format, `maxPixelSize`, …).
    public let options: DecodeOptions
    /// The format, sniffed from the first 16 bytes (the whole `ftyp` box for ISO BMFF; an APNG may read as `.png` until the final image is
    /// made); `.unknown` until enough bytes arrived.
    public private(set) var format: ImageFormat = .unknown
    /// Header facts (size, alpha, progressive/interlaced) as soon as the header arrived; `nil` before.
    public private(set) var info: ImageInfo?
    /// Whether the data was marked final.
    public private(set) var isFinal = false
    /// All bytes received so far.
    public private(set) var data = Data()

    /// Whether the image is a progressive JPEG or an interlaced (Adam7) PNG (or GIF), per its header; `false`
    /// until `info` is known. YYWebImage uses it to decide on progressive blur.
    public var isProgressive: Bool { info?.isProgressive ?? false }

    /// Which decoder makes the partial images, chosen from the registry once the format is sniffed.
    private var codecRoute: CodecRoute?
    private var jpegStream: JPEGStreamSession?
    private var pngStream: PNGStreamSession?
    private var pngRowsAtLastImage = 0
    private var pngPassesAtLastImage = 0
    private var jpegRowsAtLastImage = 0
    private var webpSession: WebPIncrementalSession?
    private var streamBuffer: PixelBuffer?
    /// Whether a partial image holds `streamBuffer`'s pixels (so the next render must not write into them).
    private var isStreamBufferShared = false
    /// The JPEG stream buffer a previous partial image took: rendered into again once no image holds it, so
    /// alternating partial images cost no allocation and (baseline) only a copy of the rows that are new.
    private var spareBuffer: PixelBuffer?
    /// Rows of `spareBuffer` holding decoded pixels (baseline); the rows after them are zero.
    private var spareRows = 0
    /// How many times the spare buffer was rendered into again instead of a fresh one (for tests).
    private(set) var spareBufferReuses = 0
    private var streamFailed = false
    private var streamComplete = false
    private var lastImage: Image?
    /// The colour plan of the partial images, once decided (`previewColorPlan`).
    private var previewColor: ColorPlan?
    private var bytesAtLastImage = 0
    private var finalResult: Result<Image, Error>?
    /// Whether the final image came from a stream's pixels rather than the one-shot decode (for tests).
    private(set) var isFinalFromStream = false
    /// How far the PNG stream got; `nil` when there is none (for tests).
    var pngProgress: PNGStreamSession.Progress? { pngStream?.progress }
    /// Rows holding decoded pixels in the JPEG stream; `nil` when there is none (for tests).
    var jpegRowsDecoded: Int? { jpegStream?.rowsDecoded }

    /// Makes a decoder; `options` default to `DecodeOptions()`.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
    }

    /// The header facts (size, alpha, progressive) of `data`, the first bytes of a download, read as a decoder
    /// reads them before it allocates anything (PNG's IHDR, GIF's logical screen, JPEG up to its frame
    /// header, WebP's features): `nil` while more bytes are needed, and for formats of registered codecs.
    /// For a budget of the bitmaps a decoder will hold, before it is made.
    ///
    /// - Important: Stateless and thread-safe.
    public static func headerInfo(of data: Data) -> ImageInfo? {
        guard data.count >= ImageFormat.sniffLength(data) else { return nil }
        let format = ImageFormat.sniff(data)
        guard format != .unknown else { return nil }
        return IncrementalHeader.read(data, format: format)
    }

    /// Appends `chunk` to the data received so far (append semantics: pass only the new bytes); `isFinal`
    /// marks the end of the data (an empty chunk is fine). Updates `format` and `info` from the header.
    ///
    /// - Throws: `ImageCodecError.corruptData` when called after the data was final. Invalid data is
    ///   reported by `makeImage()` once final.
    public func update(_ chunk: Data, isFinal: Bool) throws {
        guard !self.isFinal else {
            throw ImageCodecError.corruptData(format: format, message: "update after the final data")
        }
        data.append(chunk)
        self.isFinal = isFinal
        if format == .unknown, data.count >= ImageFormat.sniffLength(data) || isFinal { format = ImageFormat.sniff(data) }
        if codecRoute == nil, data.count >= ImageFormat.sniffLength(data) || isFinal { codecRoute = chooseRoute() }
        if case .session(let session)? = codecRoute {
            session.update(data, isFinal: isFinal)
            return
        }
        guard codecRoute == .builtIn else { return }  // another codec, without partial images: final only
        if info == nil, format != .unknown { info = IncrementalHeader.read(data, format: format) }
        if format == .webp, !streamFailed, !isFinal { feedWebP(chunk) }
        if format == .png || format == .apng, !streamFailed { feedPNG(pngStream == nil ? data : chunk) }
        if format == .jpeg, !streamFailed, info != nil {
            do {
                if jpegStream == nil {
                    jpegStream = try JPEGStreamSession()
                    try jpegStream?.append(data, isFinal: isFinal)
                } else {
                    try jpegStream?.append(chunk, isFinal: isFinal)
                }
            } catch {
                // The stream is only for partial images; the final one-shot decode reports real errors.
                dropStream()
            }
        }
    }

    /// The best image so far, or `nil` when nothing can be shown yet. Once final, the one-shot result.
    ///
    /// - Throws: only once the data is final: the error `ImageDecoder.decode` throws for the whole data.
    /// - Important: O(pixels) when a new partial image is made; see the type's notes on how often.
    public func makeImage() throws -> Image? {
        if isFinal {
            if finalResult == nil {
                if let image = finishStream() ?? finishPNGStream() {
                    finalResult = .success(image)
                    isFinalFromStream = true
                } else {
                    finalResult = Result { try ImageDecoder.decode(data, options: options) }
                }
                dropStream()
                // An APNG is only told from a PNG by its acTL chunk, which the first bytes may not hold.
                if case .success(let image)? = finalResult { format = image.format }
            }
            return try finalResult?.get()
        }
        if case .session(let session)? = codecRoute {
            do { lastImage = try session.makeImage() ?? lastImage } catch { codecRoute = .finalOnly }
            return lastImage
        }
        guard format != .unknown, info != nil, codecRoute == .builtIn else { return nil }
        if format == .png || format == .apng { return try pngPartialImage() }
        // Progressive scans are rendered whole (and the fallback re-decodes from the start): bound that work.
        // Baseline JPEG rows are each decoded once as they arrive.
        let isIncremental = jpegStream != nil && !isProgressive
        guard isIncremental || lastImage == nil || data.count >= 2 * bytesAtLastImage else { return lastImage }
        let buffer: PixelBuffer?
        var hasAlpha: Bool?
        if let stream = jpegStream {
            buffer = renderScan(stream)
            let rows = stream.rowsDecoded, height = buffer?.height ?? 0
            hasAlpha = rows < height  // rows not yet decoded are transparent
            if isIncremental, buffer != nil, lastImage != nil, rows < height,
               rows - jpegRowsAtLastImage < Self.minimumNewRows(height: height) {
                return lastImage  // decoded, but too few new rows to pay for a new image (a copy of the pixels)
            }
            if buffer != nil { jpegRowsAtLastImage = rows }
        } else if let webp = webpSession {
            do { buffer = try webp.rowsSoFar() } catch { buffer = nil }  // allocation failure: nothing new
        } else {
            buffer = PartialSnapshot.decode(data, format: format, pixelFormat: options.pixelFormat, limits: options.limits)
        }
        guard let buffer else { return lastImage }
        let image = try partialImage(buffer, hasAlpha: hasAlpha ?? !buffer.isOpaque)
        if jpegStream != nil, image.width == buffer.width, image.height == buffer.height { isStreamBufferShared = true }
        lastImage = image
        bytesAtLastImage = data.count
        return image
    }

    /// New rows a stream must have decoded since the previous partial image before another is made (1/8 of
    /// the height): each new image costs a copy of the full-size pixels (page faults included, about 2 ms for
    /// 1920×1080), so this bounds that cost to about 8 copies while still showing the image grow.
    static func minimumNewRows(height: Int) -> Int { max(1, height / 8) }

    /// Renders the newest completed scan of a progressive JPEG, or reads a baseline JPEG's new rows, into the
    /// reused stream buffer; `nil` when nothing new was decoded. Sets `streamComplete` once libjpeg reached
    /// the end of the image.
    private func renderScan(_ stream: JPEGStreamSession) -> PixelBuffer? {
        do {
            guard try stream.prepare(limits: options.limits), let size = stream.outputSize else { return nil }
            if streamBuffer == nil {
                streamBuffer = try PixelBuffer(width: size.width, height: size.height, pixelFormat: options.pixelFormat,
                                               zeroed: true)
            }
            guard var buffer = streamBuffer else { return nil }
            streamBuffer = nil  // so that, unless an image holds them, the pixels are uniquely referenced
            if isStreamBufferShared {
                // The previous partial image holds these pixels: continue in another buffer. A progressive
                // output pass rewrites every row; a baseline render continues after the rows so far, so the
                // other buffer needs those rows (and zero after them).
                let rows = isProgressive ? 0 : stream.rowsDecoded
                var spare = spareBuffer  // moved out, so that it is unique unless an image still holds it
                spareBuffer = nil
                if spare?.isUniquelyReferenced() == true {
                    // No image holds the spare any more: copy just the rows decoded since it was current.
                    Self.copyRows(min(spareRows, rows)..<rows, from: buffer, into: &spare!)
                    spareBufferReuses += 1
                } else {
                    // A fresh zeroed buffer (its pages are touched only where written) with the rows so far.
                    spare = try Self.copy(rows: rows, of: buffer)
                }
                spareBuffer = buffer
                spareRows = rows
                buffer = spare!
                isStreamBufferShared = false
            }
            let stride = buffer.bytesPerRow
            let progress = try buffer.withUnsafeMutableBytes { try stream.render(into: $0.baseAddress!, bytesPerRow: stride) }
            streamBuffer = buffer
            streamComplete = progress.isComplete
            return progress.didRender ? buffer : nil
        } catch {
            dropStream()
            return nil
        }
    }

    /// Copies rows `rows` of `source` into `destination` (same size and stride).
    private static func copyRows(_ rows: Range<Int>, from source: PixelBuffer, into destination: inout PixelBuffer) {
        let rows = rows.clamped(to: 0..<source.height)
        guard !rows.isEmpty, source.bytesPerRow == destination.bytesPerRow else { return }
        let offset = rows.lowerBound * source.bytesPerRow, byteCount = rows.count * source.bytesPerRow
        source.withUnsafeBytes { from in
            destination.withUnsafeMutableBytes { to in
                (to.baseAddress! + offset).copyMemory(from: from.baseAddress! + offset, byteCount: byteCount)
            }
        }
    }

    /// A new zeroed buffer like `buffer` holding a copy of its first `rows` rows.
    private static func copy(rows: Int, of buffer: PixelBuffer) throws -> PixelBuffer {
        var fresh = try PixelBuffer(width: buffer.width, height: buffer.height, pixelFormat: buffer.pixelFormat,
                                    bytesPerRow: buffer.bytesPerRow)
        let byteCount = min(max(rows, 0), buffer.height) * buffer.bytesPerRow
        guard byteCount > 0 else { return fresh }
        buffer.withUnsafeBytes { source in
            fresh.withUnsafeMutableBytes { $0.baseAddress?.copyMemory(from: source.baseAddress!, byteCount: byteCount) }
        }
        return fresh
    }

    /// The final image of a JPEG from its stream (progressive: every scan's coefficients are buffered and only
    /// the last output pass is left; baseline: the rows already read plus the rest), or `nil` to fall back to the one-shot decode: with `maxPixelSize`
    /// (the one-shot decode scales in the DCT), without a final EOI marker (truncated data is reported as
    /// partial by the one-shot decode), when libjpeg warned about corrupt data (its recovery can depend on
    /// where the input suspended), or when the stream failed. libjpeg gives the same pixels either way.
    private func finishStream() -> Image? {
        guard let stream = jpegStream, options.maxPixelSize == nil, data.count >= 2,
              data[data.endIndex - 2] == 0xFF, data[data.endIndex - 1] == 0xD9 else { return nil }
        do {
            let info = try JPEGDecoder.info(data)
            for _ in 0..<8 where !streamComplete { _ = renderScan(stream) }
            // The colour stage runs on the stream's opaque rows as on the one-shot decode's; CMYK through a
            // profile needs the raw inks, which only the one-shot decode keeps: fall back to it.
            let (colorSpace, color) = try JPEGDecoder.colorPlan(of: data, options: options)
            let isCMYKTransform = color.transform.map { $0.layout == .cmyk || $0.layout == .invertedCMYK } ?? false
            if streamComplete, stream.warnings == 0, var buffer = streamBuffer, !isCMYKTransform {
                color.apply(to: &buffer)
                return Image(frames: [ImageFrame(buffer: buffer)], format: .jpeg, loopCount: 1, hasAlpha: false,
                             isProgressive: info.isProgressive, orientation: info.orientation,
                             originalData: options.keepsOriginalData ? data : nil, colorSpace: colorSpace,
                             pixelICCProfile: color.pixelICCProfile)
            }
            return nil
        } catch {
            return nil  // the one-shot decode gives the verdict
        }
    }

    /// A partial image of `buffer`; `hasAlpha` is true while rows not yet received (transparent) are left.
    /// Colour-managed like the final image, on the smallest buffer (after any resize), never in place in the
    /// stream's own buffer (copy-on-write: the stream keeps rendering into its untransformed rows).
    private func partialImage(_ buffer: PixelBuffer, hasAlpha: Bool) throws -> Image {
        var pixels = buffer
        if let size = options.maxPixelSize, size > 0 { pixels = try pixels.resized(maxPixelSize: size) }
        let color = previewColorPlan()
        if color.transform != nil {
            let format = pixels.pixelFormat
            pixels.convert(to: .rgba8)  // the transform takes straight pixels; alpha is never changed
            color.apply(to: &pixels)
            pixels.convert(to: format)
        }
        return Image(frames: [ImageFrame(buffer: pixels)], format: format, loopCount: 1, hasAlpha: hasAlpha,
                     isProgressive: isProgressive, isPartial: true,
                     orientation: info?.orientation ?? .up, pixelICCProfile: color.pixelICCProfile)
    }

    /// The colour plan of the partial images, decided at the first one (the colour description precedes the pixel
    /// data in every format: JPEG APP2 before SOF, PNG iCCP/sRGB/cICP/gAMA/cHRM before IDAT, WebP ICCP before the
    /// bitstream). Only RGB and grey plans: the streams give CMYK JPEGs as RGB by the profile-less formula, so
    /// their previews stay as they are (the final image goes through the profile).
    private func previewColorPlan() -> ColorPlan {
        if let previewColor { return previewColor }
        var plan = ColorPlan.none
        switch format {
        case .jpeg:
            plan = (try? JPEGDecoder.colorPlan(of: data, options: options))?.1 ?? .none
        case .png, .apng:
            if data.count >= 26 {
                let colorSpace = data.withUnsafeBytes { PNGColorChunks.read($0) }
                let layout = PNGDecoder.colorLayout(colorType: Int(data[data.startIndex + 25]))
                plan = ColorStage.plan(colorSpace: colorSpace, layout: layout, management: options.colorManagement)
            }
        case .webp:
            let colorSpace = data.withUnsafeBytes { WebPColorChunk.iccProfile($0) }.map { ImageColorSpace(iccProfile: $0) }
            plan = ColorStage.plan(colorSpace: colorSpace, layout: .rgba, management: options.colorManagement)
        default:
            break  // GIF: sRGB
        }
        if let layout = plan.transform?.layout, layout != .rgba, layout != .greyInRGBA {
            plan = ColorPlan(transform: nil, pixelICCProfile: plan.pixelICCProfile)
        }
        previewColor = plan
        return plan
    }

    /// Starts libpng's progressive reader on the first bytes, then pushes each chunk (decoded once, never again).
    private func feedPNG(_ bytes: Data) {
        do {
            if pngStream == nil {
                pngStream = try PNGStreamSession(limits: options.limits, format: format, opaqueFormat: options.pixelFormat)
            }
            try pngStream?.append(bytes)
        } catch {
            // Partial images only: the final one-shot decode reports the error (limits, corrupt data).
            dropStream()
        }
    }

    /// The PNG rows (or Adam7 passes) so far from the stream. A new image is made when an Adam7 pass completed,
    /// or when at least `minimumNewRows` rows arrived before the first full (coarse) image; otherwise the
    /// previous one comes back (each new image costs a copy of the pixels).
    private func pngPartialImage() throws -> Image? {
        guard let stream = pngStream, let pixels = stream.pixels, let header = stream.header else { return lastImage }
        let progress = stream.progress
        guard progress.rowsDelivered > 0 else { return lastImage }
        if lastImage != nil {
            let newPass = progress.passesCompleted > pngPassesAtLastImage
            let newRows = progress.rowsInPass - pngRowsAtLastImage >= Self.minimumNewRows(height: header.height)
            let beforeFirstFullImage = progress.passesCompleted == 0
            guard newPass || (beforeFirstFullImage && newRows) else { return lastImage }
        }
        // Every pixel is written once the image is complete, and for Adam7 once pass 1 (replicated) is.
        let isCovered = progress.isComplete || (progress.passes > 1 && progress.passesCompleted >= 1)
        let image = try partialImage(pixels.converted(to: options.pixelFormat), hasAlpha: header.hasAlpha || !isCovered)
        lastImage = image
        pngRowsAtLastImage = progress.rowsInPass
        pngPassesAtLastImage = progress.passesCompleted
        return image
    }

    /// The final image from the PNG stream when it is provably the one-shot result: the stream reached IEND
    /// without error or warning (libpng's push reader only warns about some faults its sequential reader
    /// rejects, such as a bad zlib checksum), the file is a plain PNG (an APNG's frames come from the APNG decoder) and no
    /// `maxPixelSize` asks for a thumbnail. Both read through the same libpng transforms, so the pixels are
    /// the same; otherwise `nil` (fall back to the one-shot decode).
    private func finishPNGStream() -> Image? {
        guard let stream = pngStream, options.maxPixelSize == nil,
              case let progress = stream.progress, progress.isComplete, progress.warnings == 0,
              let header = stream.header, let pixels = stream.pixels, ImageFormat.sniff(data) == .png else { return nil }
        // The stream's rows are straight (or opaque): the colour stage runs on them as on the one-shot decode's.
        let colorSpace = data.withUnsafeBytes { PNGColorChunks.read($0) }
        // The stream's header is after libpng's transforms (8-bit RGBA): the file's own IHDR says what it is.
        guard data.count >= 26 else { return nil }
        let (storedDepth, storedType) = (Int(data[data.startIndex + 24]), Int(data[data.startIndex + 25]))
        let color = ColorStage.plan(colorSpace: colorSpace, layout: PNGDecoder.colorLayout(colorType: storedType),
                                    management: options.colorManagement)
        // A 16-bit source converts at 16 bits in the one-shot decode (the stream has only 8): fall back to it.
        if storedDepth == 16, color.transform?.layout == .rgba { return nil }
        var buffer = pixels
        color.apply(to: &buffer)
        return Image(frames: [ImageFrame(buffer: buffer.converted(to: options.pixelFormat))], format: .png, loopCount: 1,
                     hasAlpha: header.hasAlpha, isProgressive: header.isInterlaced,
                     originalData: options.keepsOriginalData ? data : nil, colorSpace: colorSpace,
                     pixelICCProfile: color.pixelICCProfile)
    }

    /// Starts libwebp's incremental decoder once a still WebP's header is there, then appends each chunk.
    private func feedWebP(_ chunk: Data) {
        do {
            if let session = webpSession {
                try session.append(chunk)
            } else if let session = try WebPIncrementalSession.make(data, pixelFormat: options.pixelFormat,
                                                                    limits: options.limits) {
                webpSession = session
                try session.append(data)
            }
        } catch {
            // Partial images only: the final one-shot decode reports the error.
            dropStream()
        }
    }

    /// Who makes the partial images: the library streams below (the built-in formats), a registered
    /// codec's session, or nobody (the final image only).
    private enum CodecRoute: Equatable {
        case builtIn
        case session(any IncrementalImageDecoding)
        case finalOnly

        static func == (a: CodecRoute, b: CodecRoute) -> Bool {
            switch (a, b) {
            case (.builtIn, .builtIn), (.finalOnly, .finalOnly): return true
            case (.session(let x), .session(let y)): return x === y
            default: return false
            }
        }
    }

    /// The decoder that will decode the final data (the registry's first match, last registered first)
    /// makes the partial images too, when it takes incomplete data; the built-in ones use this class's own
    /// streams.
    private func chooseRoute() -> CodecRoute {
        let complete = ImageDecodingContext(format: format, isComplete: true)
        guard let decoder = ImageCodecRegistry.shared.decoders(for: data, context: complete).first else { return .finalOnly }
        if decoder is BuiltInDecoder { return .builtIn }
        guard decoder.canDecode(data, context: ImageDecodingContext(format: format, isComplete: false)) else { return .finalOnly }
        return decoder.makeIncrementalDecoder(options: options).map { .session($0) } ?? .finalOnly
    }

    private func dropStream() {
        webpSession = nil
        jpegStream = nil
        pngStream = nil
        streamBuffer = nil
        spareBuffer = nil
        isStreamBufferShared = false
        streamComplete = false
        streamFailed = true
    }
}

@available(*, unavailable, message: "IncrementalDecoder is not thread-safe; confine it to one queue")
extension IncrementalDecoder: Sendable {}
