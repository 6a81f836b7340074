import Foundation

/// Encodes APNG: every frame full-canvas (dispose none, blend source), the first frame also the default
/// image, durations as `delay_num/delay_den` milliseconds (centiseconds past 65.535 s), `num_plays` from the
/// loop count.
///
/// - Important: Stateless and thread-safe.
public enum APNGEncoder {
    /// Encodes `frames` (all the size of the first) playing `loopCount` times in total (0 = forever).
    ///
    /// - Throws: `ImageCodecError.encodingFailed` for no frames, differing sizes or a libpng failure.
    public static func encode(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions) throws -> Data {
        guard let first = frames.first else { throw ImageCodecError.encodingFailed(format: .apng, message: "no frames") }
        guard frames.allSatisfy({ $0.buffer.width == first.buffer.width && $0.buffer.height == first.buffer.height }) else {
            throw ImageCodecError.encodingFailed(format: .apng, message: "frames differ in size")
        }
        guard frames.count <= Int(Int32.max), loopCount >= 0, loopCount <= Int(Int32.max) else {
            throw ImageCodecError.encodingFailed(format: .apng, message: "frame or loop count out of range")
        }
        var out = Data(PNGChunks.signature)
        var sequence: UInt32 = 0
        for (index, frame) in frames.enumerated() {
            let png = try PNGEncoder.encode(frame.buffer, interlaced: options.isProgressive, forceAlpha: true)
            try png.withUnsafeBytes { b in
                let chunks = try PNGChunks.walk(b, format: .apng)
                if index == 0 {
                    for chunk in chunks where chunk.type == PNGChunk.type("IHDR") {
                        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[chunk.whole]))
                    }
                    var actl = [UInt8](repeating: 0, count: 8)
                    PNGChunks.put(UInt32(frames.count), into: &actl, at: 0)
                    PNGChunks.put(UInt32(loopCount), into: &actl, at: 4)
                    PNGChunks.append(type: PNGChunk.type("acTL"), bytes: actl, to: &out)
                }
                PNGChunks.append(type: PNGChunk.type("fcTL"), bytes: frameControl(frame, sequence: sequence), to: &out)
                sequence += 1
                for chunk in chunks where chunk.type == PNGChunk.type("IDAT") {
                    if index == 0 {
                        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[chunk.whole]))
                    } else {
                        var fdat = [UInt8](repeating: 0, count: 4)
                        PNGChunks.put(sequence, into: &fdat, at: 0)
                        fdat.append(contentsOf: b[chunk.data])
                        PNGChunks.append(type: PNGChunk.type("fdAT"), bytes: fdat, to: &out)
                        sequence += 1
                    }
                }
            }
        }
        PNGChunks.append(type: PNGChunk.type("IEND"), bytes: [], to: &out)
        return out
    }

    /// The 26 fcTL bytes for a full-canvas frame.
    private static func frameControl(_ frame: ImageFrame, sequence: UInt32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 26)
        PNGChunks.put(sequence, into: &bytes, at: 0)
        PNGChunks.put(UInt32(frame.buffer.width), into: &bytes, at: 4)
        PNGChunks.put(UInt32(frame.buffer.height), into: &bytes, at: 8)
        let milliseconds = max(0, (frame.duration * 1000).rounded())
        if milliseconds <= 65535 {
            PNGChunks.put(UInt16(milliseconds), into: &bytes, at: 20)
            PNGChunks.put(UInt16(1000), into: &bytes, at: 22)
        } else {
            PNGChunks.put(UInt16(min(65535, (frame.duration * 100).rounded())), into: &bytes, at: 20)
            PNGChunks.put(UInt16(100), into: &bytes, at: 22)
        }
        return bytes  // dispose_op 0 (none), blend_op 0 (source)
    }
}
