import Foundation
@_spi(QualityModel) import ImageCodec
import WebImage

/// The data automatic quality's predictor is fitted on (`scripts/quality/fit_quality_model.py`): for every
/// photograph of `corpus/photos` as a 400 px thumbnail, its `QualityFeatures`, and the bytes and SSIMULACRA2 score
/// of JPEG 4:2:0, JPEG 4:4:4 and WebP at qualities 10…100 (step 2). Runs only when named (`--only quality-fit`):
/// it is a few thousand encodes. Writes `quality-fit-features.csv` and `quality-fit-curves.csv` to
/// `$QUALITY_FIT_OUT` (default: the repository's `.build/`).
enum QualityFitBench: BenchSuite {
    static let name = "quality-fit"

    static func run(_ settings: BenchSettings) throws {
        guard settings.only?.contains(name) == true else { return }
        let directory = try QualityBench.corpus()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
        let out = ProcessInfo.processInfo.environment["QUALITY_FIT_OUT"].map { URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent(".build")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // `QUALITY_FIT_THUMBNAILS=1`: the thumbnails too (as PNG, in `thumbnails/`), to try new features offline.
        let thumbnails = ProcessInfo.processInfo.environment["QUALITY_FIT_THUMBNAILS"] == "1"
            ? out.appendingPathComponent("thumbnails") : nil
        if let thumbnails { try FileManager.default.createDirectory(at: thumbnails, withIntermediateDirectories: true) }
        var features = "name,width,height,luma_gradient,chroma_gradient,flat_fraction,edge_fraction,chroma_loss\n"
        var curves = "name,format,quality,bytes,score\n"
        for name in names {
            let image = try ImageDecoder.decode(try Data(contentsOf: directory.appendingPathComponent(name)),
                                                options: DecodeOptions(firstFrameOnly: true, maxPixelSize: 400))
            let buffer = try opaque(try image.orientation.upright(image.firstFrame.buffer))
            let f = QualityFeatures(buffer)
            if let thumbnails {
                var png = ImageEncoder(format: .png, options: EncodeOptions())
                png.addFrame(buffer)
                try png.encode().write(to: thumbnails.appendingPathComponent(name + ".png"))
            }
            features += "\(name),\(buffer.width),\(buffer.height),\(f.lumaGradient),\(f.chromaGradient),\(f.flatFraction),"
                + "\(f.edgeFraction),\(f.chromaLoss)\n"
            let reference = SSIMULACRA2.Reference(buffer)
            for (label, format, subsampling) in [("jpeg420", ImageFormat.jpeg, ChromaSubsampling.yuv420),
                                                 ("jpeg444", .jpeg, .yuv444), ("webp", .webp, .yuv420)] {
                for quality in stride(from: 10, through: 100, by: 2) {
                    // The search's options: WebP's tries convert with sharp YUV (`AutomaticQuality`).
                    var options = EncodeOptions(quality: Double(quality) / 100, chromaSubsampling: subsampling)
                    options.usesSharpYUV = format == .webp
                    var encoder = ImageEncoder(format: format, options: options)
                    encoder.addFrame(buffer)
                    let data = try encoder.encode()
                    let score = try reference.score(try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true)).firstFrame.buffer)
                    curves += "\(name),\(label),\(quality),\(data.count),\(score)\n"
                }
            }
            print("  \(name)")
        }
        try features.write(to: out.appendingPathComponent("quality-fit-features.csv"), atomically: true, encoding: .utf8)
        try curves.write(to: out.appendingPathComponent("quality-fit-curves.csv"), atomically: true, encoding: .utf8)
        print("  wrote \(out.path)/quality-fit-{features,curves}.csv")
    }

    /// Opaque pixels as JPEG's encoder writes a transparent source (premultiplied colour on black), so JPEG and
    /// WebP are measured on the same pixels.
    static func opaque(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let premultiplied = buffer.converted(to: .rgba8Premultiplied)
        var out = try PixelBuffer(width: buffer.width, height: buffer.height)
        let (inStride, outStride) = (premultiplied.bytesPerRow, out.bytesPerRow)
        premultiplied.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for y in 0..<buffer.height {
                    for x in 0..<buffer.width {
                        let p = y * inStride + x * 4, q = y * outStride + x * 4
                        (dst[q], dst[q + 1], dst[q + 2], dst[q + 3]) = (src[p], src[p + 1], src[p + 2], 255)
                    }
                }
            }
        }
        return out
    }
}
