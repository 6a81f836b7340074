internal import CWebImageGIF
import Foundation

/// Where giflib reads from: encoded bytes in memory and a cursor the decoder may move to re-read a frame.
///
/// Lives on the stack of `GIFReader.withHandle`; giflib reaches it through `GifFileType.UserData`.
struct GIFInput {
    var base: UnsafePointer<UInt8>
    var count: Int
    var offset: Int
}

/// giflib's `InputFunc`: copies up to `length` bytes from the `GIFInput` behind `UserData`.
private func gifRead(_ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?,
                     _ length: Int32) -> Int32 {
    guard let gif, let buffer, length > 0, let user = gif.pointee.UserData else { return 0 }
    let input = user.assumingMemoryBound(to: GIFInput.self)
    let available = input.pointee.count - input.pointee.offset
    let n = min(Int(length), max(available, 0))
    if n > 0 {
        buffer.update(from: input.pointee.base + input.pointee.offset, count: n)
        input.pointee.offset += n
    }
    return Int32(n)
}

/// What the record walk learns about one image (frame) of a GIF, enough to decode it again later.
struct GIFFrameInfo: Sendable {
    /// Byte offset of the image separator (`,`) so a frame can be decoded again by moving the cursor there.
    var recordOffset: Int
    var left: Int
    var top: Int
    var width: Int
    var height: Int
    var isInterlaced: Bool
    /// GIF disposal method: 0 unspecified, 1 none, 2 background, 3 previous (others treated as none).
    var disposal: Int
    /// The transparent colour index from the graphics control extension, or -1.
    var transparentIndex: Int
    /// The delay from the graphics control extension, in centiseconds.
    var delayCentiseconds: Int

    /// Display duration after the browsers' rule.
    var duration: Double { ImageFrame.displayDuration(forStoredDelay: Double(delayCentiseconds) / 100) }
}

/// Opens giflib over bytes in memory and walks records the way `DGifSlurp` does, so a file is accepted or
/// rejected as giflib's own reader would.
///
/// - Important: Not thread-safe; each call opens its own `GifFileType`.
enum GIFReader {
    /// giflib's message for an error code.
    static func message(_ code: Int32) -> String {
        if let text = GifErrorString(code) { return String(cString: text) }
        return "unknown giflib error \(code)"
    }

    /// The error for a failed giflib call on `gif`.
    static func error(_ gif: UnsafeMutablePointer<GifFileType>) -> ImageCodecError {
        let code = gif.pointee.Error
        if code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON { return .truncated(format: .gif) }
        return .corruptData(format: .gif, message: code == 0 ? "unknown giflib error" : message(code))
    }

    /// Opens giflib over `bytes` (header, screen descriptor and global colour map are read) and calls `body`.
    static func withHandle<R>(_ bytes: UnsafeRawBufferPointer,
                              _ body: (UnsafeMutablePointer<GifFileType>, UnsafeMutablePointer<GIFInput>) throws -> R) throws -> R {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw ImageCodecError.emptyData }
        var input = GIFInput(base: base.assumingMemoryBound(to: UInt8.self), count: bytes.count, offset: 0)
        return try withUnsafeMutablePointer(to: &input) { inputPointer in
            var code: Int32 = 0
            guard let gif = DGifOpen(inputPointer, gifRead, &code) else {
                if code == D_GIF_ERR_READ_FAILED { throw ImageCodecError.truncated(format: .gif) }
                throw ImageCodecError.corruptData(format: .gif, message: message(code))
            }
            defer {
                var closeCode: Int32 = 0
                DGifCloseFile(gif, &closeCode)
            }
            return try body(gif, inputPointer)
        }
    }

    /// The result of a record walk.
    struct Scan {
        var frames: [GIFFrameInfo] = []
        /// The first NETSCAPE2.0 / ANIMEXTS1.0 loop value (repeats), `nil` when absent.
        var storedLoopCount: Int?
        var hasTransparency = false
        var isInterlaced = false
    }

    /// Walks every record as `DGifSlurp` does. For each image, after its descriptor is read and validated,
    /// calls `onImage(index, frame, gif)`, which must consume the image's pixel data (decode or skip it).
    ///
    /// - Parameter stopAfterFirstImage: end the walk after the first image (first-frame-only decodes).
    /// - Throws: giflib's error, `.limitExceeded` as soon as the frame count or a frame's size exceeds `limits`.
    static func walk(_ gif: UnsafeMutablePointer<GifFileType>, input: UnsafeMutablePointer<GIFInput>,
                     limits: DecodeLimits, stopAfterFirstImage: Bool = false,
                     onImage: (Int, GIFFrameInfo, UnsafeMutablePointer<GifFileType>) throws -> Void) throws -> Scan {
        let canvasPixels = Int(gif.pointee.SWidth) * Int(gif.pointee.SHeight)
        var scan = Scan()
        var pendingGCE: (disposal: Int, transparent: Int, delay: Int)?
        var record = UNDEFINED_RECORD_TYPE
        repeat {
            let recordOffset = input.pointee.offset
            guard DGifGetRecordType(gif, &record) != GIF_ERROR else { throw error(gif) }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) != GIF_ERROR else { throw error(gif) }
                let desc = gif.pointee.Image
                // DGifSlurp's own checks: a zero-size or overflowing frame is an error.
                guard desc.Width > 0, desc.Height > 0, desc.Width <= Int32.max / desc.Height else {
                    throw ImageCodecError.corruptData(format: .gif, message: "invalid frame size \(desc.Width)×\(desc.Height)")
                }
                let index = scan.frames.count
                let frameCount = index + 1
                if frameCount > limits.maxFrameCount {
                    throw ImageCodecError.limitExceeded(limit: .frameCount, actual: frameCount, maximum: limits.maxFrameCount)
                }
                let (total, overflow) = canvasPixels.multipliedReportingOverflow(by: frameCount)
                if overflow || total > limits.maxTotalPixels {
                    throw ImageCodecError.limitExceeded(limit: .totalPixels, actual: overflow ? .max : total, maximum: limits.maxTotalPixels)
                }
                // The frame's own raster is decoded (not allocated) even where clipped: bound that work too.
                let framePixels = Int(desc.Width) * Int(desc.Height)
                if framePixels > limits.maxPixelsPerFrame {
                    throw ImageCodecError.limitExceeded(limit: .pixelsPerFrame, actual: framePixels, maximum: limits.maxPixelsPerFrame)
                }
                let gce = pendingGCE ?? (0, -1, 0)
                pendingGCE = nil
                let frame = GIFFrameInfo(recordOffset: recordOffset, left: Int(desc.Left), top: Int(desc.Top),
                                         width: Int(desc.Width), height: Int(desc.Height), isInterlaced: desc.Interlace,
                                         disposal: gce.disposal, transparentIndex: gce.transparent,
                                         delayCentiseconds: gce.delay)
                if gce.transparent >= 0 { scan.hasTransparency = true }
                if desc.Interlace { scan.isInterlaced = true }
                scan.frames.append(frame)
                try onImage(index, frame, gif)
                if stopAfterFirstImage { return scan }
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) != GIF_ERROR else { throw error(gif) }
                var blockIndex = 0
                var isLoopApplication = false
                // As DGifSlurp does, DGifGetExtensionNext is called at least once even when the first block is
                // already the terminator; giflib then rejects such files ("Wrong record type detected").
                var callNext = true
                while callNext {
                    guard let current = block else {
                        guard DGifGetExtensionNext(gif, &block) != GIF_ERROR else { throw error(gif) }
                        callNext = block != nil
                        continue
                    }
                    let length = Int(current[0])
                    let payload = UnsafeBufferPointer(start: current + 1, count: length)
                    if code == GRAPHICS_EXT_FUNC_CODE, blockIndex == 0, length >= 4 {
                        let packed = Int(payload[0])
                        pendingGCE = (disposal: (packed >> 2) & 7,
                                      transparent: packed & 1 == 1 ? Int(payload[3]) : -1,
                                      delay: Int(payload[1]) | Int(payload[2]) << 8)
                    } else if code == APPLICATION_EXT_FUNC_CODE, blockIndex == 0, length == 11 {
                        let name = String(decoding: payload, as: UTF8.self)
                        isLoopApplication = name == "NETSCAPE2.0" || name == "ANIMEXTS1.0"
                    } else if isLoopApplication, blockIndex == 1, length >= 3, payload[0] == 1, scan.storedLoopCount == nil {
                        scan.storedLoopCount = Int(payload[1]) | Int(payload[2]) << 8
                    }
                    blockIndex += 1
                    guard DGifGetExtensionNext(gif, &block) != GIF_ERROR else { throw error(gif) }
                    callNext = block != nil
                }
            default:
                break
            }
        } while record != TERMINATE_RECORD_TYPE
        guard !scan.frames.isEmpty else {
            throw ImageCodecError.corruptData(format: .gif, message: message(D_GIF_ERR_NO_IMAG_DSCR))
        }
        return scan
    }

    /// Reads and discards the compressed data of the current image without decoding it (for `info`).
    static func skipImageData(_ gif: UnsafeMutablePointer<GifFileType>) throws {
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetCode(gif, &codeSize, &block) != GIF_ERROR else { throw error(gif) }
        while block != nil {
            guard DGifGetCodeNext(gif, &block) != GIF_ERROR else { throw error(gif) }
        }
    }

    /// The colour map that applies to the current image: its local map, else the global one.
    static func colorMap(_ gif: UnsafeMutablePointer<GifFileType>) -> UnsafeMutablePointer<ColorMapObject>? {
        gif.pointee.Image.ColorMap ?? gif.pointee.SColorMap
    }
}
