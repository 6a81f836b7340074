import ImageCodec
import WebImageAVIF
import WebImageJXL

/// The memory one render holds at its peak, from its plan alone (the header, no pixels decoded yet): what the
/// decode budget reserves before the render runs, so that every buffer a render makes is counted, not only
/// the decode and the output (a blur at 4096² held +260 MiB while 64 MiB were reserved).
///
/// A render holds, in turn:
/// 1. the decode (`DecodeBudget.estimatedCost`, its intermediates included);
/// 2. the decoded image (every frame of an animation) until it ends, the output frames already made, and
///    the peak of shaping one frame: the oriented copy, the crop, the resize (its result and its rows in
///    flight), the blur (a 16-bit working plane of 8 bytes a pixel, its result, and two column strips);
/// 3. the decoded image, every output frame, and the encoder's own buffers (a straight-alpha copy, libwebp's
///    pictures and canvases, libavif's YUV image and libaom's frames, libjxl's float planes) and the encoded data.
/// The peak is the largest of the three. Each step's bytes are what `PixelBuffer`'s processing allocates
/// (their documented buffers); the encoded data is bounded by the raw output of a still and half the raw
/// frames of an animation.
///
/// - Important: A value type; thread-safe.
struct RenderCost: Sendable, Hashable {
    /// Bytes of the decoded image the render works from, held until it ends.
    var decodedBytes: Int
    /// The peak of shaping one frame, besides the decoded image and the output frames already made.
    var shapingBytes: Int
    /// Bytes of one output frame (RGBA8).
    var outputFrameBytes: Int
    /// Output frames the encoder keeps until it encodes.
    var outputFrames: Int
    /// The encoder's working buffers and the encoded data.
    var encodingBytes: Int

    /// Rows a resize may hold in flight, as an upper bound (`RowResampler`'s accumulators: 4 `Int32` per
    /// pixel of a source row, a few taps per output row).
    static let resizeRowsInFlight = 64

    /// The peak of a render whose decode alone is estimated at `decodeCost` bytes (saturating).
    func peak(decodeCost: Int) -> Int {
        let kept = Self.product(outputFrameBytes, max(outputFrames - 1, 0))
        let allFrames = Self.product(outputFrameBytes, outputFrames)
        let shaping = Self.sum(decodedBytes, kept, shapingBytes)
        let encoding = Self.sum(decodedBytes, allFrames, encodingBytes)
        return max(decodeCost, shaping, encoding)
    }

    /// The cost of a render of decoded frames of `inputWidth × inputHeight` (as stored, before `orientation`),
    /// `frames` of them decoded, shaped by `geometry` and `blur`, kept as `outputFrames` output frames encoded
    /// as `format`.
    init(inputWidth: Int, inputHeight: Int, frames: Int, orientation: ImageOrientation, geometry: OutputGeometry,
         blur: Double, outputFrames: Int, format: ImageFormat, filterPixels: Int = 0, effort: EncodeEffort = .balanced) {
        let input = Self.product(inputWidth, inputHeight, 4)
        decodedBytes = Self.product(input, max(frames, 1))
        let output = Self.product(geometry.outputWidth, geometry.outputHeight, 4)
        outputFrameBytes = output
        self.outputFrames = max(outputFrames, 1)

        // Shaping, step by step as `ImageService.shape` runs: `current` is the buffer made by the step before
        // (0 while it is still the decoded frame itself); each step holds it and its own buffers at once.
        var (width, height) = orientation.swapsDimensions ? (inputHeight, inputWidth) : (inputWidth, inputHeight)
        var current = 0
        var peak = 0
        if orientation != .up {
            current = input
            peak = current
        }
        if geometry.scaledWidth != geometry.outputWidth || geometry.scaledHeight != geometry.outputHeight {
            let crop = RenderPlan.cropSize(of: (width, height), geometry: geometry)
            let bytes = Self.product(crop.width, crop.height, 4)
            peak = max(peak, Self.sum(current, bytes))
            (current, width, height) = (bytes, crop.width, crop.height)
        }
        if width != geometry.outputWidth || height != geometry.outputHeight {
            let rows = Self.product(Self.resizeRowsInFlight, width, 16)
            peak = max(peak, Self.sum(current, output, rows))
            current = output
        }
        if blur > 0 {
            // `PixelBuffer.blurred`: the 16-bit plane (8 bytes a pixel), the result, two strips of 64 columns.
            let plane = Self.product(geometry.outputWidth, geometry.outputHeight, 8)
            let strips = Self.product(2 * 64 * 4 * 2, geometry.outputHeight)
            peak = max(peak, Self.sum(current, plane, output, strips))
        }
        if filterPixels > 0 {
            // The output filters, flips and the source crop, at most as big as the box (`fill`, `upscale`): the
            // worst is a sharpen (or a blur of a straight-alpha image), which holds its input, a straight copy, the
            // premultiplied copy the blur works on, the blur's 16-bit plane (two frames' worth), its result and
            // its result converted back: seven frames of the box.
            let largest = Self.product(max(filterPixels, geometry.outputWidth * geometry.outputHeight), 4)
            peak = max(peak, Self.sum(input, Self.product(largest, 7)))
        }
        shapingBytes = peak

        // The encoder: a straight-alpha copy of a frame (PNG, WebP, GIF; JPEG takes premultiplied, converted
        // when the frame is not), libwebp's ARGB and YUV pictures (a still) or its canvases and candidate
        // sub-frames (an animation, about six frames' worth), GIF's index raster, and the encoded data.
        let encoded = outputFrames > 1 ? Self.product(output, outputFrames) / 2 : output
        let working: Int
        let outputPixels = Self.product(geometry.outputWidth, geometry.outputHeight)
        switch format {
        case .webp: working = outputFrames > 1 ? Self.product(output, 7) : Self.product(output, 3)
        case .gif: working = output + output / 4
        // A straight copy, libavif's YUV image and libaom's frame buffers (one frame at a time: measured).
        case .avif: working = Self.sum(output, Self.product(outputPixels, AVIFEncoder.workingBytesPerPixel),
                                       AVIFEncoder.fixedWorkingBytes(for: effort))
        // A straight copy, the packed rows libjxl copies in, and libjxl's float planes (one frame at a time: measured).
        case .jpegXL: working = Self.sum(output, output, Self.product(outputPixels, JXLEncoder.workingBytesPerPixel))
        default: working = output
        }
        encodingBytes = Self.sum(working, encoded)
    }

    /// Adds a scored automatic-quality search (`q=auto`, not `:predicted`) of a still `format` output of
    /// `outputPixels` to the encoder's bytes: its metric's references and candidates
    /// (`QualityTarget.scoredSearchBytesPerPixel`), held while the search encodes. Nothing for animations and
    /// formats without a search (PNG, GIF), which encode at a fixed quality. AVIF at `effort` `.balanced` up to
    /// `AutomaticQuality.avifRefinementMaximumPixels` also re-encodes its winner at libaom's speed 5, which holds
    /// `AVIFEncoder.fixedWorkingBytes(speed:)` more.
    mutating func addScoredSearch(outputPixels: Int, format: ImageFormat, effort: EncodeEffort) {
        guard outputFrames == 1, format != .png, format != .apng, format != .gif else { return }
        encodingBytes = Self.sum(encodingBytes, Self.product(outputPixels, QualityTarget.scoredSearchBytesPerPixel))
        if format == .avif, effort == .balanced, outputPixels <= AutomaticQuality.avifRefinementMaximumPixels {
            encodingBytes = Self.sum(encodingBytes, AVIFEncoder.fixedWorkingBytes(speed: AutomaticQuality.avifRefinementSpeed))
        }
    }

    /// The cost of recompressing a JPEG of `pixels` losslessly into JPEG XL (`JXLEncoder.recompressJPEG`): libjxl's
    /// DCT coefficients and working planes (`JXLEncoder.jpegRecompressionBytesPerPixel`, measured), the source and
    /// an output no larger than it (it is about 20 % smaller).
    init(jpegRecompressionOf pixels: Int, sourceBytes: Int) {
        decodedBytes = 0
        shapingBytes = 0
        outputFrameBytes = 0
        outputFrames = 1
        encodingBytes = Self.sum(Self.product(pixels, JXLEncoder.jpegRecompressionBytesPerPixel), sourceBytes, sourceBytes)
    }

    private static func product(_ values: Int...) -> Int {
        var total = 1
        for value in values {
            let (result, overflow) = total.multipliedReportingOverflow(by: max(value, 0))
            if overflow { return .max }
            total = result
        }
        return total
    }

    private static func sum(_ values: Int...) -> Int {
        var total = 0
        for value in values {
            let (result, overflow) = total.addingReportingOverflow(value)
            if overflow { return .max }
            total = result
        }
        return total
    }
}
