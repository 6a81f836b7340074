internal import CWebImageAVIF
import ImageCodec

/// The `clap`, `irot` and `imir` properties of an AVIF image, applied in that order (ISO/IEC 23008-12 and the
/// AVIF specification): libavif 0.11 reports them in `transformFlags` but leaves the pixels as coded.
///
/// - Important: A value type; thread-safe.
struct AVIFTransform: Sendable {
    /// The crop rectangle (`clap`), or `nil`.
    var crop: (x: Int, y: Int, width: Int, height: Int)?
    /// Anti-clockwise quarter turns (`irot`), 0…3.
    var quarterTurns = 0
    /// `imir` mode: 0 exchanges top and bottom, 1 exchanges left and right; `nil` without `imir`.
    var mirrorMode: UInt8?
    /// The coded size.
    var width: Int, height: Int

    /// Reads the transforms of `image` (coded size `width × height`).
    ///
    /// - Throws: `ImageCodecError.corruptData` for a `clap` that does not fit the image (libavif's
    ///   `avifCropRectConvertCleanApertureBox` refuses it).
    init(_ image: avifImage, width: Int, height: Int) throws {
        self.width = width
        self.height = height
        var image = image
        let flags = image.transformFlags
        if flags & avifTransformFlags(AVIF_TRANSFORM_CLAP.rawValue) != 0 {
            var rect = avifCropRect()
            var diag = avifDiagnostics()
            guard avifCropRectConvertCleanApertureBox(&rect, &image.clap, UInt32(width), UInt32(height), image.yuvFormat, &diag)
                    != AVIF_FALSE else {
                throw ImageCodecError.corruptData(format: .avif, message: "invalid clean aperture (clap)")
            }
            if rect.width != width || rect.height != height || rect.x != 0 || rect.y != 0 {
                crop = (Int(rect.x), Int(rect.y), Int(rect.width), Int(rect.height))
            }
        }
        if flags & avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue) != 0 { quarterTurns = Int(image.irot.angle & 3) }
        if flags & avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue) != 0 { mirrorMode = image.imir.mode & 1 }
    }

    /// The size after the transforms.
    var outputSize: (width: Int, height: Int) {
        let w = crop?.width ?? width, h = crop?.height ?? height
        return quarterTurns % 2 == 1 ? (h, w) : (w, h)
    }

    var isIdentity: Bool { crop == nil && quarterTurns == 0 && mirrorMode == nil }

    /// `buffer` (coded size) cropped, rotated and mirrored.
    func apply(_ buffer: PixelBuffer) throws -> PixelBuffer {
        guard !isIdentity else { return buffer }
        var out = buffer
        if let crop { out = try out.cropped(x: crop.x, y: crop.y, width: crop.width, height: crop.height) }
        switch quarterTurns {  // anti-clockwise
        case 1: out = try out.rotated(by: .clockwise270)
        case 2: out = try out.rotated(by: .clockwise180)
        case 3: out = try out.rotated(by: .clockwise90)
        default: break
        }
        switch mirrorMode {
        case 0?: out = try out.flippedVertically()
        case 1?: out = try out.flippedHorizontally()
        default: break
        }
        return out
    }
}
