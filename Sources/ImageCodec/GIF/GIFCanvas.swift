internal import CWebImageGIF
import Foundation

/// The logical screen of a GIF animation while frames are composited onto it, as browsers do.
///
/// Rules (Chrome and Firefox):
/// - The canvas starts fully transparent; the GIF background colour is ignored.
/// - Pixels with the transparent index leave the canvas as it is. Indices outside the colour map, and every
///   pixel of a frame with no colour map at all, are treated as transparent too.
/// - Frame rectangles are clipped to the logical screen (never rejected, never enlarging the canvas).
/// - Disposal 2 (background) clears the frame rectangle to transparent; 3 (previous) restores what the
///   rectangle held before the frame was drawn; 0, 1 and the undefined 4–7 leave the frame in place.
///
/// Every pixel is either opaque or `(0, 0, 0, 0)`, so the same bytes are valid straight and premultiplied RGBA.
///
/// - Important: Not thread-safe; owned by one decode (or by `GIFFrameSource` under its lock).
struct GIFCanvas {
    let width: Int
    let height: Int
    /// The composited pixels, packed RGBA (`width * 4` bytes per row).
    var pixels: PixelBuffer
    /// What a "previous" disposal restores: the clipped rectangle of the frame being drawn, saved before drawing.
    private var saved: [UInt32] = []
    /// One decoded row of colour indices, reused for every row.
    private var line: [GifPixelType] = []

    /// A transparent canvas labelled `format`. The caller has checked the size against the limits.
    init(width: Int, height: Int, format: PixelBuffer.PixelFormat) throws {
        self.width = width
        self.height = height
        self.pixels = try PixelBuffer(width: width, height: height, pixelFormat: format)
    }

    /// Clears the whole canvas to transparent (restarting from a keyframe): a fresh zeroed buffer, since the
    /// old one is usually shared with a frame handed out.
    mutating func clear() throws {
        pixels = try PixelBuffer(width: width, height: height, pixelFormat: pixels.pixelFormat)
        saved.removeAll(keepingCapacity: true)
    }

    /// Puts back a canvas saved earlier (a snapshot taken when the canvas was ready for some frame).
    mutating func restore(_ snapshot: PixelBuffer) {
        pixels = snapshot
        saved.removeAll(keepingCapacity: true)
    }

    /// The frame rectangle clipped to the canvas, or `nil` when nothing of it is visible.
    private func clip(_ frame: GIFFrameInfo) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        let x1 = min(frame.left + frame.width, width)
        let y1 = min(frame.top + frame.height, height)
        guard frame.left < x1, frame.top < y1 else { return nil }
        return (frame.left, frame.top, x1, y1)
    }

    /// Decodes the current image of `gif` (its descriptor just read) and draws it onto the canvas.
    /// Saves the rectangle first when the frame's disposal is "previous".
    mutating func draw(_ frame: GIFFrameInfo, from gif: UnsafeMutablePointer<GifFileType>) throws {
        if frame.disposal == 3 { saveRectangle(of: frame) }
        let palette = GIFCanvas.palette(for: frame, from: gif)
        if line.count < frame.width { line = [GifPixelType](repeating: 0, count: frame.width) }
        let visible = clip(frame)
        let (canvasWidth, frameWidth, left, top) = (width, frame.width, frame.left, frame.top)
        try palette.withUnsafeBufferPointer { table in
            try line.withUnsafeMutableBufferPointer { row in
                try pixels.withUnsafeMutableBytes { raw in
                    let canvas = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
                    for sourceRow in GIFCanvas.rowOrder(height: frame.height, interlaced: frame.isInterlaced) {
                        guard DGifGetLine(gif, row.baseAddress, Int32(frameWidth)) != GIF_ERROR else {
                            throw GIFReader.error(gif)
                        }
                        guard let v = visible else { continue }
                        let y = top + sourceRow
                        guard y < v.y1 else { continue }
                        let out = canvas + y * canvasWidth + v.x0
                        let indices = row.baseAddress! + (v.x0 - left)
                        let colors = table.baseAddress!
                        for x in 0..<(v.x1 - v.x0) {
                            let color = colors[Int(indices[x])]
                            if color != 0 { out[x] = color }
                        }
                    }
                }
            }
        }
    }

    /// Applies `frame`'s disposal after it has been shown.
    mutating func dispose(_ frame: GIFFrameInfo) throws {
        guard let v = clip(frame) else { return }
        let canvasWidth = width
        switch frame.disposal {
        case 2 where v.x0 == 0 && v.y0 == 0 && v.x1 == width && v.y1 == height:
            // The whole canvas: a fresh zeroed buffer, rather than copying pixels (shared with the frame just
            // handed out) only to clear them.
            pixels = try PixelBuffer(width: width, height: height, pixelFormat: pixels.pixelFormat)
        case 2:
            pixels.withUnsafeMutableBytes { raw in
                let canvas = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
                for y in v.y0..<v.y1 { (canvas + y * canvasWidth + v.x0).update(repeating: 0, count: v.x1 - v.x0) }
            }
        case 3:
            guard saved.count == (v.x1 - v.x0) * (v.y1 - v.y0) else { return }
            saved.withUnsafeBufferPointer { source in
                pixels.withUnsafeMutableBytes { raw in
                    let canvas = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
                    let w = v.x1 - v.x0
                    for y in v.y0..<v.y1 {
                        (canvas + y * canvasWidth + v.x0).update(from: source.baseAddress! + (y - v.y0) * w, count: w)
                    }
                }
            }
        default:
            break
        }
    }

    private mutating func saveRectangle(of frame: GIFFrameInfo) {
        saved.removeAll(keepingCapacity: true)
        guard let v = clip(frame) else { return }
        let canvasWidth = width
        pixels.withUnsafeBytes { raw in
            let canvas = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
            for y in v.y0..<v.y1 {
                saved.append(contentsOf: UnsafeBufferPointer(start: canvas + y * canvasWidth + v.x0, count: v.x1 - v.x0))
            }
        }
    }

    /// The canvas as a frame in `format`. In the canvas's own format this shares the pixels (copy-on-write:
    /// the canvas copies them when it next changes, so each frame costs one allocation at most). Every pixel
    /// is opaque or zero, so the bytes are the same in both formats.
    func snapshot(_ format: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        if format == pixels.pixelFormat { return pixels }
        var out = try PixelBuffer(width: width, height: height, pixelFormat: format)
        pixels.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { $0.copyMemory(from: source) }
        }
        return out
    }

    /// The current image's 256 colours as packed opaque RGBA (`r | g << 8 | b << 16 | 0xFF << 24`); the
    /// transparent index, indices past the colour map, and every index without a colour map are 0.
    static func palette(for frame: GIFFrameInfo, from gif: UnsafeMutablePointer<GifFileType>) -> [UInt32] {
        var palette = [UInt32](repeating: 0, count: 256)
        if let map = GIFReader.colorMap(gif), let colors = map.pointee.Colors {
            for i in 0..<min(Int(map.pointee.ColorCount), 256) {
                let c = colors[i]
                palette[i] = UInt32(c.Red) | UInt32(c.Green) << 8 | UInt32(c.Blue) << 16 | 0xFF00_0000
            }
        }
        if frame.transparentIndex >= 0, frame.transparentIndex < 256 { palette[frame.transparentIndex] = 0 }
        return palette
    }

    /// The order in which rows arrive: top to bottom, or the four GIF interlace passes
    /// (every 8th row from 0, every 8th from 4, every 4th from 2, every 2nd from 1).
    static func rowOrder(height: Int, interlaced: Bool) -> [Int] {
        guard interlaced else { return Array(0..<height) }
        var rows: [Int] = []
        rows.reserveCapacity(height)
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            rows.append(contentsOf: stride(from: start, to: height, by: step))
        }
        return rows
    }
}
