internal import CWebImageWebP
import Foundation

extension WebPEncoder {
    /// One picture converted to YUVA once, by libwebp's sharp RGB→YUV conversion (`WebPPictureSharpARGBToYUVA`),
    /// then encoded lossy as often as asked: byte for byte what `WebPEncoder.encode(_:options:)` writes for the
    /// same buffer with `EncodeOptions.usesSharpYUV` (or `.smallest`), without converting again each time.
    /// Automatic quality's WebP search (up to 6 tries and the winner's method-6 re-encode) converts once through one
    /// of these: 22 % less CPU per scored 400×300 WebP request in the service (docs/quality.md).
    ///
    /// - Important: Not thread-safe: one owner, one thread at a time (a search runs on one thread).
    final class SharpYUVSource {
        private var picture: WebPPicture
        /// The buffer had a pixel that is not opaque (libwebp then keeps an alpha plane; `makeConfig`'s method).
        let hasAlpha: Bool
        let width: Int
        let height: Int

        /// Converts `buffer` (premultiplied or straight; any size `WebPEncoder` takes).
        ///
        /// - Throws: `ImageCodecError.encodingFailed` for a picture libwebp refuses or cannot convert.
        init(_ buffer: PixelBuffer) throws {
            // `WebPEncode` converts an ARGB picture first, then flattens the YUV under transparent blocks
            // (`WebPCleanupTransparentArea`, `exact` off) on each encode: doing that again on this picture changes
            // nothing, so every encode sees what a fresh conversion would give.
            var argb = try WebPEncoder.makePicture(buffer)
            defer { WebPPictureFree(&argb) }
            guard WebPPictureSharpARGBToYUVA(&argb) != 0 else {
                throw ImageCodecError.encodingFailed(format: .webp, message: "sharp RGB→YUV conversion failed (\(argb.error_code.rawValue))")
            }
            // The converted picture still holds its ARGB (4 bytes a pixel); a copy of the YUVA planes alone (about
            // 2.5) is what the search keeps (`WebPPictureCopy` copies the YUVA planes of a picture not in ARGB).
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0, WebPPictureCopy(&argb, &picture) != 0 else {
                throw ImageCodecError.allocationFailed(byteCount: buffer.width * buffer.height * 5 / 2)
            }
            self.picture = picture
            hasAlpha = !buffer.isOpaque
            (width, height) = (buffer.width, buffer.height)
        }

        deinit { WebPPictureFree(&picture) }

        /// Whether `buffer` is the size this picture was made from (a cheap guard for callers that hold one per
        /// buffer; the pixels themselves are not compared).
        func fits(_ buffer: PixelBuffer) -> Bool { buffer.width == width && buffer.height == height }

        /// Encodes the converted picture lossy with `options` (quality, effort, deadline; `isLossless` must be
        /// `false`).
        ///
        /// - Throws: `ImageCodecError.deadlineExceeded` past `options.deadline`, `.encodingFailed` with libwebp's
        ///   error.
        func encode(options: EncodeOptions) throws -> Data {
            guard !options.isLossless else {
                throw ImageCodecError.encodingFailed(format: .webp, message: "a converted YUVA picture encodes lossy only")
            }
            var config = try WebPEncoder.makeConfig(options, hasAlpha: hasAlpha)
            return try WebPEncoder.encode(&picture, config: &config, options: options)
        }
    }
}
