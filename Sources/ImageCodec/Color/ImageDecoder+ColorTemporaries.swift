import Foundation

extension ImageDecoder {
    /// Bytes the colour stage allocates beside the decoded bitmap when `data` is decoded with `options`: the
    /// 16-bit temporary (8 bytes a pixel) of a 16-bit PNG whose colour is converted before it is reduced to
    /// 8 bits (full-size decodes), and whatever the registered decoder that takes other data reports
    /// (`ImageDecoding.colorTemporaryByteCount(of:options:)`: the AVIF and HEIF modules' 16-bit temporaries of
    /// full-size 10/12-bit decodes); 0 otherwise. For a memory budget of decodes (`DecodeBudget.estimatedCost`),
    /// before the decode: reads the headers and the colour description only (the transform, if any, comes from
    /// the shared cache).
    ///
    /// - Important: Thread-safe.
    public static func colorTemporaryByteCount(of data: Data, options: DecodeOptions) -> Int {
        let format = ImageFormat.sniff(data)
        guard format == .png else {
            let context = ImageDecodingContext(format: format, isComplete: true)
            return ImageCodecRegistry.shared.decoders(for: data, context: context).first?
                .colorTemporaryByteCount(of: data, options: options) ?? 0
        }
        guard options.maxPixelSize == nil, options.colorManagement != .preserve, data.count >= 33 else { return 0 }
        let start = data.startIndex
        let be32 = { (i: Int) in Int(data[start + i]) << 24 | Int(data[start + i + 1]) << 16 | Int(data[start + i + 2]) << 8 | Int(data[start + i + 3]) }
        let (width, height, depth, colorType) = (be32(16), be32(20), Int(data[start + 24]), Int(data[start + 25]))
        guard depth == 16 else { return 0 }
        // As PNGDecoder.decode: an RGB transform at 8 bits, and one for 16-bit pixels, mean the deep path runs.
        let colorSpace = data.withUnsafeBytes { PNGColorChunks.read($0) }
        let color = ColorStage.plan(colorSpace: colorSpace, layout: PNGDecoder.colorLayout(colorType: colorType),
                                    management: options.colorManagement)
        guard color.transform?.layout == .rgba,
              ColorStage.plan(colorSpace: colorSpace, layout: .rgba16, management: options.colorManagement)
                .transform?.layout == .rgba16 else { return 0 }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: 8)
        return o1 || o2 ? .max : bytes
    }
}
