import Foundation

/// One `fcTL` chunk: where and how an APNG frame is drawn.
struct APNGFrameControl: Sendable, Hashable {
    /// Disposal after the frame is shown (`dispose_op`).
    enum Dispose: UInt8, Sendable { case none = 0, background = 1, previous = 2 }
    /// How the frame is drawn onto the canvas (`blend_op`).
    enum Blend: UInt8, Sendable { case source = 0, over = 1 }

    var width: Int
    var height: Int
    var x: Int
    var y: Int
    var delayNumerator: Int
    var delayDenominator: Int
    var dispose: Dispose
    var blend: Blend

    /// The stored delay in seconds (a denominator of 0 means 1/100 s), before the browsers' rule.
    var storedDelay: Double {
        Double(delayNumerator) / Double(delayDenominator == 0 ? 100 : delayDenominator)
    }

    /// Whether the frame covers the whole `width × height` canvas.
    func coversCanvas(width canvasWidth: Int, height canvasHeight: Int) -> Bool {
        x == 0 && y == 0 && width == canvasWidth && height == canvasHeight
    }
}

/// One animation frame: its control and where its compressed data lies in the file.
struct APNGFrameInfo: Sendable, Hashable {
    var control: APNGFrameControl
    /// Payload ranges: IDAT data for a frame that is the default image, else fdAT data after the sequence number.
    var dataRanges: [Range<Int>]
}

/// The chunk structure of an APNG, validated before any pixel is allocated.
///
/// Checked: chunk lengths and bounds, CRCs of `acTL`/`fcTL`/`fdAT`, sequence numbers (0, 1, 2, … across
/// `fcTL` and `fdAT`), frame rectangles inside the canvas (overflow-checked), dispose and blend values, every
/// frame having data. An animation that is invalid in a way browsers tolerate by showing the default image
/// (`acTL` with 0 or more than 2^31-1 frames, a second `acTL`) sets `isAnimationValid = false`; other
/// violations throw `ImageCodecError.corruptData`.
struct APNGContainer: Sendable, Hashable {
    var canvasWidth: Int
    var canvasHeight: Int
    /// The 13 IHDR data bytes.
    var ihdr: [UInt8]
    /// Whole chunks between IHDR and the first IDAT that every frame needs (PLTE, tRNS, gAMA, iCCP, …).
    var sharedChunks: [Range<Int>]
    /// `num_plays`: total plays, 0 = forever.
    var numPlays: Int
    /// The animation frames (at most `num_frames`; a default image outside the animation is not one).
    var frames: [APNGFrameInfo]
    /// `false` when the file must be shown as its still default image.
    var isAnimationValid: Bool

    var hasAlpha: Bool { ihdr[9] & 4 != 0 || hasTransparencyChunk }
    var isInterlaced: Bool { ihdr[12] == 1 }
    var hasTransparencyChunk: Bool

    /// Parses and validates `b`.
    static func parse(_ b: UnsafeRawBufferPointer) throws -> APNGContainer {
        func corrupt(_ message: String) -> ImageCodecError { .corruptData(format: .apng, message: message) }
        let chunks = try PNGChunks.walk(b, format: .apng)
        guard let first = chunks.first, first.type == PNGChunk.type("IHDR"), first.data.count == 13 else {
            throw corrupt("IHDR missing or malformed")
        }
        let ihdr = [UInt8](b[first.data])
        let width = Int(PNGChunks.readUInt32(b, first.data.lowerBound))
        let height = Int(PNGChunks.readUInt32(b, first.data.lowerBound + 4))
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw ImageCodecError.invalidDimensions(width: width, height: height)
        }
        var container = APNGContainer(canvasWidth: width, canvasHeight: height, ihdr: ihdr, sharedChunks: [],
                                      numPlays: 0, frames: [], isAnimationValid: true, hasTransparencyChunk: false)
        var numFrames = 0
        var sawACTL = false
        var sawIDAT = false
        var nextSequence: UInt32 = 0
        var defaultIsFrame = false

        func checkSequence(_ chunk: PNGChunk, _ name: String) throws {
            guard PNGChunks.hasValidCRC(chunk, in: b) else { throw corrupt("\(name): CRC error") }
            let sequence = PNGChunks.readUInt32(b, chunk.data.lowerBound)
            guard sequence == nextSequence else {
                throw corrupt("\(name): sequence number \(sequence), expected \(nextSequence)")
            }
            nextSequence &+= 1
        }

        for chunk in chunks.dropFirst() {
            switch chunk.type {
            case PNGChunk.type("acTL"):
                guard chunk.data.count == 8, PNGChunks.hasValidCRC(chunk, in: b) else { throw corrupt("acTL: bad length or CRC") }
                if sawACTL || sawIDAT { container.isAnimationValid = false; continue }
                sawACTL = true
                let frames = PNGChunks.readUInt32(b, chunk.data.lowerBound)
                container.numPlays = Int(PNGChunks.readUInt32(b, chunk.data.lowerBound + 4))
                if frames == 0 || frames > UInt32(Int32.max) { container.isAnimationValid = false }
                numFrames = Int(frames)
            case PNGChunk.type("fcTL"):
                guard chunk.data.count == 26 else { throw corrupt("fcTL: length \(chunk.data.count)") }
                try checkSequence(chunk, "fcTL")
                if let last = container.frames.last, last.dataRanges.isEmpty { throw corrupt("frame \(container.frames.count - 1) has no data") }
                let o = chunk.data.lowerBound
                let control = try frameControl(b, at: o, canvasWidth: width, canvasHeight: height)
                if !sawIDAT {
                    guard container.frames.isEmpty, control.coversCanvas(width: width, height: height) else {
                        throw corrupt("fcTL before IDAT must be the first frame and cover the canvas")
                    }
                    defaultIsFrame = true
                }
                container.frames.append(APNGFrameInfo(control: control, dataRanges: []))
            case PNGChunk.type("IDAT"):
                sawIDAT = true
                if defaultIsFrame, container.frames.count == 1 { container.frames[0].dataRanges.append(chunk.data) }
            case PNGChunk.type("fdAT"):
                guard chunk.data.count >= 4 else { throw corrupt("fdAT: length \(chunk.data.count)") }
                try checkSequence(chunk, "fdAT")
                guard sawIDAT, let index = container.frames.indices.last, !(index == 0 && defaultIsFrame) else {
                    throw corrupt("fdAT without its fcTL")
                }
                container.frames[index].dataRanges.append((chunk.data.lowerBound + 4)..<chunk.data.upperBound)
            case PNGChunk.type("IEND"):
                break
            default:
                if !sawIDAT {
                    container.sharedChunks.append(chunk.whole)
                    if chunk.type == PNGChunk.type("tRNS") { container.hasTransparencyChunk = true }
                }
            }
        }
        guard sawIDAT else { throw corrupt("no IDAT") }
        guard sawACTL, container.isAnimationValid else {
            container.isAnimationValid = false
            container.frames = []
            return container
        }
        if container.frames.count > numFrames { container.frames.removeLast(container.frames.count - numFrames) }
        guard let last = container.frames.last else { throw corrupt("acTL declares \(numFrames) frames but there is no fcTL") }
        guard !last.dataRanges.isEmpty else { throw corrupt("frame \(container.frames.count - 1) has no data") }
        return container
    }

    /// Reads and validates the fcTL body at `o` (after its sequence number is checked).
    private static func frameControl(_ b: UnsafeRawBufferPointer, at o: Int, canvasWidth: Int,
                                     canvasHeight: Int) throws -> APNGFrameControl {
        let w = Int(PNGChunks.readUInt32(b, o + 4)), h = Int(PNGChunks.readUInt32(b, o + 8))
        let x = Int(PNGChunks.readUInt32(b, o + 12)), y = Int(PNGChunks.readUInt32(b, o + 16))
        // Every value is below 2^32, so the sums cannot overflow a 64-bit Int.
        guard w > 0, h > 0, x + w <= canvasWidth, y + h <= canvasHeight else {
            throw ImageCodecError.corruptData(format: .apng, message: "frame \(w)×\(h) at (\(x), \(y)) outside the \(canvasWidth)×\(canvasHeight) canvas")
        }
        guard let dispose = APNGFrameControl.Dispose(rawValue: b[o + 24]),
              let blend = APNGFrameControl.Blend(rawValue: b[o + 25]) else {
            throw ImageCodecError.corruptData(format: .apng, message: "fcTL: dispose \(b[o + 24]) / blend \(b[o + 25]) out of range")
        }
        return APNGFrameControl(width: w, height: h, x: x, y: y, delayNumerator: Int(PNGChunks.readUInt16(b, o + 20)),
                                delayDenominator: Int(PNGChunks.readUInt16(b, o + 22)), dispose: dispose, blend: blend)
    }

    /// A standalone PNG for frame `index`: signature, IHDR with the frame's size, the shared chunks, one IDAT
    /// with the frame's data, IEND.
    func standalonePNG(frame index: Int, from b: UnsafeRawBufferPointer) throws -> Data {
        let frame = frames[index]
        var out = Data()
        let payload = frame.dataRanges.reduce(0) { $0 + $1.count }
        guard payload <= Int(Int32.max) else { throw ImageCodecError.corruptData(format: .apng, message: "frame data over 2^31-1 bytes") }
        out.reserveCapacity(payload + sharedChunks.reduce(0) { $0 + $1.count } + 64)
        out.append(contentsOf: PNGChunks.signature)
        var header = ihdr
        PNGChunks.put(UInt32(frame.control.width), into: &header, at: 0)
        PNGChunks.put(UInt32(frame.control.height), into: &header, at: 4)
        PNGChunks.append(type: PNGChunk.type("IHDR"), bytes: header, to: &out)
        for range in sharedChunks { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[range])) }
        if frame.dataRanges.count == 1, let range = frame.dataRanges.first {
            PNGChunks.append(type: PNGChunk.type("IDAT"), data: UnsafeRawBufferPointer(rebasing: b[range]), to: &out)
        } else {
            var joined = [UInt8]()
            joined.reserveCapacity(payload)
            for range in frame.dataRanges { joined.append(contentsOf: b[range]) }
            PNGChunks.append(type: PNGChunk.type("IDAT"), bytes: joined, to: &out)
        }
        PNGChunks.append(type: PNGChunk.type("IEND"), bytes: [], to: &out)
        return out
    }
}
