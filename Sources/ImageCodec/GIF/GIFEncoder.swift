internal import CWebImageGIF
import Foundation

/// Collects what giflib writes (`EGifOpen`'s output function appends here).
private final class GIFOutput {
    var data = Data()
}

/// giflib's `OutputFunc`: appends `length` bytes to the `GIFOutput` behind `UserData`.
private func gifWrite(_ gif: UnsafeMutablePointer<GifFileType>?, _ bytes: UnsafePointer<GifByteType>?,
                      _ length: Int32) -> Int32 {
    guard let gif, let bytes, length >= 0, let user = gif.pointee.UserData else { return 0 }
    Unmanaged<GIFOutput>.fromOpaque(user).takeUnretainedValue().data.append(bytes, count: Int(length))
    return length
}

/// Encodes still or animated GIF 89a through giflib.
///
/// Each frame gets its own local palette from `ColorQuantizer` (exact when the frame has at most 256 colours,
/// 255 with transparency; median cut otherwise, with Floyd–Steinberg dithering by default). Pixels with
/// alpha < 128 become transparent. Every frame covers the whole canvas; when any frame has transparency,
/// frames are disposed to background so transparent areas do not show the previous frame.
///
/// Loop count: `loopCount` is total plays (0 = forever). 1 writes no NETSCAPE2.0 extension (play once);
/// otherwise the extension stores `loopCount - 1` repeats (0 for forever), capped at 65535.
/// Delays are written in centiseconds, rounded, capped at 655.35 s.
///
/// - Important: Stateless and thread-safe.
public enum GIFEncoder {
    /// Encodes `frames` (all the size of the first) with the default Floyd–Steinberg dithering.
    ///
    /// - Throws: `ImageCodecError.encodingFailed` for frames of different sizes or a giflib error.
    public static func encode(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions) throws -> Data {
        try encode(frames, loopCount: loopCount, options: options, dithering: true)
    }

    /// Encodes `frames`, choosing whether photo-like frames (more than 256 colours) are dithered.
    ///
    /// - Parameter dithering: Floyd–Steinberg error diffusion when a palette must be reduced (default `true`).
    public static func encode(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions, dithering: Bool) throws -> Data {
        guard let first = frames.first else { throw ImageCodecError.encodingFailed(format: .gif, message: "no frames") }
        let (width, height) = (first.buffer.width, first.buffer.height)
        guard width <= 65535, height <= 65535 else {
            throw ImageCodecError.encodingFailed(format: .gif, message: "GIF frames are at most 65535×65535")
        }
        guard frames.allSatisfy({ $0.buffer.width == width && $0.buffer.height == height }) else {
            throw ImageCodecError.encodingFailed(format: .gif, message: "every frame must be \(width)×\(height)")
        }
        let indexed = frames.map { ColorQuantizer.quantize($0.buffer, dithering: dithering) }
        let disposal = indexed.contains { $0.transparentIndex != nil } ? 2 : 1
        let output = GIFOutput()
        var code: Int32 = 0
        guard let gif = EGifOpen(Unmanaged.passUnretained(output).toOpaque(), gifWrite, &code) else {
            throw ImageCodecError.encodingFailed(format: .gif, message: GIFReader.message(code))
        }
        var closed = false
        defer {
            if !closed {
                var ignored: Int32 = 0
                EGifCloseFile(gif, &ignored)
            }
        }
        func check(_ result: Int32) throws {
            guard result != GIF_ERROR else {
                throw ImageCodecError.encodingFailed(format: .gif, message: GIFReader.message(gif.pointee.Error))
            }
        }
        EGifSetGifVersion(gif, true)
        try check(EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, nil))
        if loopCount != 1, frames.count > 1 {
            let repeats = loopCount <= 0 ? 0 : min(loopCount - 1, 65535)
            try check(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE))
            try check(Array("NETSCAPE2.0".utf8).withUnsafeBufferPointer { EGifPutExtensionBlock(gif, 11, $0.baseAddress) })
            let loop: [UInt8] = [1, UInt8(repeats & 0xFF), UInt8(repeats >> 8)]
            try check(loop.withUnsafeBufferPointer { EGifPutExtensionBlock(gif, 3, $0.baseAddress) })
            try check(EGifPutExtensionTrailer(gif))
        }
        for (frame, image) in zip(frames, indexed) {
            try writeFrame(image, delay: frames.count > 1 ? frame.duration : 0, disposal: disposal,
                           width: width, height: height, gif: gif, check: check)
        }
        closed = true
        guard EGifCloseFile(gif, &code) != GIF_ERROR else {
            throw ImageCodecError.encodingFailed(format: .gif, message: GIFReader.message(code))
        }
        return output.data
    }

    private static func writeFrame(_ image: ColorQuantizer.Indexed, delay: Double, disposal: Int, width: Int, height: Int,
                                   gif: UnsafeMutablePointer<GifFileType>, check: (Int32) throws -> Void) throws {
        let centiseconds = max(0, min(65535, Int((delay * 100).rounded())))
        let packed = UInt8(disposal << 2) | (image.transparentIndex != nil ? 1 : 0)
        let gce: [UInt8] = [packed, UInt8(centiseconds & 0xFF), UInt8(centiseconds >> 8), UInt8(image.transparentIndex ?? 0)]
        try check(gce.withUnsafeBufferPointer { EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, $0.baseAddress) })
        // giflib wants a power-of-two colour count of at least 2.
        var size = 2
        while size < image.colorCount { size *= 2 }
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: size)
        for i in 0..<image.colorCount {
            colors[i] = GifColorType(Red: image.palette[i * 3], Green: image.palette[i * 3 + 1], Blue: image.palette[i * 3 + 2])
        }
        guard let map = GifMakeMapObject(Int32(size), colors) else {
            throw ImageCodecError.encodingFailed(format: .gif, message: "could not make a colour map of \(size)")
        }
        defer { GifFreeMapObject(map) }
        try check(EGifPutImageDesc(gif, 0, 0, Int32(width), Int32(height), false, map))
        var indices = image.indices
        try indices.withUnsafeMutableBufferPointer { rows in
            for y in 0..<height {
                try check(EGifPutLine(gif, rows.baseAddress! + y * width, Int32(width)))
            }
        }
    }
}
