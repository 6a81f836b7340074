import ArgumentParser
import Foundation
import WebImage

/// `webimage convert IN OUT`: re-encodes an image, keeping every frame, duration and the loop count when both
/// sides are animated formats.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert an image (JPEG, PNG, APNG, GIF, WebP, AVIF, HEIC, JPEG XL) to PNG, APNG, JPEG, WebP, GIF, AVIF or JPEG XL.",
        discussion: """
        The output format comes from OUT's extension (png, apng, jpg/jpeg, webp, gif, avif, jxl) unless --format
        is given (AVIF when the installed libavif has an AV1 encoder; HEIC is read, not written).
        An animated input written as GIF, WebP or APNG (also to a .png name) keeps every frame, duration and
        the loop count; a still format gets the first frame, or frame N with --frame. EXIF orientation is
        applied to still output. --thumbnail N decodes a downsampled image whose longest side is at most N
        (JPEG through DCT scaling, PNG row by row; animations give a still of their first frame, or of frame N
        with --frame), never enlarging. A file that cannot be read or decoded is reported on stderr with exit status 1.

        Examples:
          webimage convert photo.jpg photo.webp --quality 80
          webimage convert photo.jpg photo.webp --quality auto
          webimage convert anim.gif anim.png
          webimage convert anim.webp frame3.png --frame 3
          webimage convert huge.jpg thumb.jpg --thumbnail 400
        """
    )

    @Argument(help: "The image to read.")
    var input: String

    @Argument(help: "The file to write.")
    var output: String

    @Option(help: "Output format: png, apng, jpeg, webp, gif, avif or jxl (default: from OUT's extension).")
    var format: String?

    @Option(help: "Quality for JPEG, lossy WebP, AVIF and JPEG XL: 0…100, or auto, auto:low, auto:high, auto:SCORE (the lowest quality keeping that SSIMULACRA2 score; auto is 70), each optionally with :predicted (one unscored encode at the predicted quality).")
    var quality: String = "90"

    /// The fixed quality (0…1) and the automatic target, from --quality.
    private var parsedQuality: (fixed: Double, automatic: QualityTarget?)? {
        if quality.lowercased().hasPrefix("auto") {
            return QualityTarget(parameter: quality).map { (0.9, $0) }
        }
        guard let value = Double(quality), (0...100).contains(value) else { return nil }
        return (value / 100, nil)
    }

    @Option(help: "Write only frame N (0-based) as a still image.")
    var frame: Int?

    @Option(help: "Decode a thumbnail whose longest side is at most N pixels (never enlarges).")
    var thumbnail: Int?

    @Option(help: "Refuse images of more than N pixels per frame, before decoding (default: DecodeLimits.default).")
    var maxPixels: Int?

    func validate() throws {
        if let thumbnail, thumbnail < 1 { throw ValidationError("--thumbnail must be 1 or more") }
        guard parsedQuality != nil else {
            throw ValidationError("--quality must be between 0 and 100, or auto, auto:low, auto:high, auto:SCORE, optionally with :predicted")
        }
        if let frame, frame < 0 { throw ValidationError("--frame must be 0 or more") }
        if let maxPixels, maxPixels < 1 { throw ValidationError("--max-pixels must be 1 or more") }
    }

    func run() throws {
        do {
            try convert()
        } catch let error as ValidationError {
            throw error
        } catch {
            FileHandle.standardError.write(Data("webimage convert: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func convert() throws {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: input)) } catch {
            throw ConvertError("\(input): cannot read: \(error.localizedDescription)")
        }
        let image: Image
        // --frame picks a frame of the full animation, so the thumbnail is made from it after decoding.
        var limits = DecodeLimits.default
        if let maxPixels { limits.maxPixelsPerFrame = maxPixels }
        let options = DecodeOptions(limits: limits, maxPixelSize: frame == nil ? thumbnail : nil)
        do { image = try ImageDecoder.decode(data, options: options) } catch {
            throw ConvertError("\(input): cannot decode: \(error)")
        }
        let name = format ?? URL(fileURLWithPath: output).pathExtension
        guard var target = Self.format(named: name) else {
            throw ValidationError("unknown output format '\(name)'; use --format png|apng|jpeg|webp|gif|avif")
        }
        let (fixedQuality, automaticQuality) = parsedQuality ?? (0.9, nil)
        let encodeOptions = EncodeOptions(quality: fixedQuality, automaticQuality: automaticQuality)
        let encoded: Data
        if let frame {
            guard frame < image.frameCount else {
                throw ConvertError("\(input): --frame \(frame) but the image has \(image.frameCount) frame(s)")
            }
            var buffer = try image.frame(at: frame).buffer
            if let thumbnail { buffer = try buffer.resized(maxPixelSize: thumbnail) }
            var encoder = ImageEncoder(format: target == .apng ? .png : target, loopCount: 1, options: encodeOptions)
            encoder.addFrame(buffer)
            encoded = try encoder.encode()
        } else if image.isAnimated, target == .png || ImageCodecRegistry.shared.canEncode(target, frameCount: image.frameCount) {
            if target == .png { target = .apng }
            var encoder = ImageEncoder(format: target, loopCount: image.loopCount, options: encodeOptions)
            for frame in try image.allFrames() { encoder.addFrame(frame.buffer, duration: frame.duration) }
            encoded = try encoder.encode()
        } else {
            let upright = try image.orientation.upright(image.firstFrame.buffer)
            var encoder = ImageEncoder(format: target, loopCount: image.loopCount, options: encodeOptions)
            encoder.addFrame(upright, duration: image.duration(at: 0))
            encoded = try encoder.encode()
        }
        do { try encoded.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
            throw ConvertError("\(output): cannot write: \(error.localizedDescription)")
        }
    }

    /// The format for an extension or `--format` value.
    static func format(named name: String) -> ImageFormat? {
        switch name.lowercased() {
        case "png": return .png
        case "apng": return .apng
        case "jpg", "jpeg": return .jpeg
        case "webp": return .webp
        case "gif": return .gif
        case "avif": return .avif
        case "jxl": return .jpegXL
        case "heic", "heif": return .heif
        default: return nil
        }
    }
}

/// A convert failure with its message (printed as is).
struct ConvertError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
