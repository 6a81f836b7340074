import Foundation
import ImageCodec

/// The JSON body of `GET /info`: what the header says and what one small decode (at most 100 pixels a side)
/// shows. Keys are snake_case and sorted, so equal reports are equal bytes (and equal ETags).
///
/// ```json
/// {"blurhash":"LFE.@D9F01_2%L%MIVD*9Goe-;WB","bytes":52301,"color_space":"srgb","dominant_color":"#5a7d3c",
///  "duration":0,"format":"jpeg","frames":1,"has_alpha":false,"height":600,"orientation":1,
///  "thumbhash":"3QgOHZpgdndwiIiGiGeIh/GxD/h3","width":800}
/// ```
///
/// - Important: A value type; thread-safe.
public struct ImageInfoReport: Sendable, Hashable, Codable {
    /// The container format (`jpeg`, `png`, `gif`, `webp`, `avif`, …).
    public var format: String
    /// The width as displayed (after EXIF orientation).
    public var width: Int
    /// The height as displayed (after EXIF orientation).
    public var height: Int
    /// Frames (1 for a still image).
    public var frames: Int
    /// The total display time of an animation in seconds (0 for a still image).
    public var duration: Double
    /// Whether the image may have transparent pixels (from the header).
    public var hasAlpha: Bool
    /// The EXIF orientation, 1…8 (1 when absent).
    public var orientation: Int
    /// What the file says of its colours: `srgb` (declared), `icc` (an embedded profile, `icc:<bytes>`),
    /// `cicp:<primaries>/<transfer>/<matrix>`, `gamma:<exponent>`, or `untagged` (taken as sRGB).
    public var colorSpace: String
    /// The source's size in bytes.
    public var bytes: Int
    /// The most common colour (`PixelBuffer.dominantColor` of the small decode) as `#rrggbb`; `null` when no
    /// pixel is at least half opaque.
    public var dominantColor: String?
    /// The BlurHash of the displayed image, 4 × 3 components (`Image.blurHash`).
    public var blurhash: String
    /// The ThumbHash of the displayed image, base64 (`Image.thumbHash`).
    public var thumbhash: String

    enum CodingKeys: String, CodingKey {
        case format, width, height, frames, duration, orientation, bytes, blurhash, thumbhash
        case hasAlpha = "has_alpha"
        case colorSpace = "color_space"
        case dominantColor = "dominant_color"
    }

    /// The report of `data` (whose header is `info`) from `thumbnail`, its first frame decoded small.
    ///
    /// - Throws: `ImageCodecError.allocationFailed` from the placeholders' thumbnail.
    public init(info: ImageInfo, byteCount: Int, thumbnail: Image) throws {
        format = info.format.rawValue
        (width, height) = info.orientation.swapsDimensions ? (info.height, info.width) : (info.width, info.height)
        frames = info.frameCount
        duration = info.frameCount > 1 ? info.durations.reduce(0, +) : 0
        hasAlpha = info.hasAlpha
        orientation = info.orientation.rawValue
        colorSpace = Self.describe(thumbnail.colorSpace)
        bytes = byteCount
        dominantColor = thumbnail.firstFrame.buffer.dominantColor.map { String(format: "#%02x%02x%02x", $0.r, $0.g, $0.b) }
        blurhash = try thumbnail.blurHash()
        thumbhash = Data(try thumbnail.thumbHash()).base64EncodedString()
    }

    /// The JSON bytes (sorted keys).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    static func describe(_ space: ImageColorSpace?) -> String {
        guard let space, !space.isEmpty else { return "untagged" }
        if let icc = space.iccProfile { return "icc:\(icc.count)" }
        if let c = space.cicp { return "cicp:\(c.colorPrimaries)/\(c.transferCharacteristics)/\(c.matrixCoefficients)" }
        if space.isDeclaredSRGB { return "srgb" }
        if let gamma = space.gamma { return String(format: "gamma:%.5f", gamma) }
        return "untagged"
    }
}
