import ImageCodec

/// A straight-alpha RGBA drawing surface for the contact sheet and the animation caption: fills, checkerboards,
/// premultiplied images composited over, and text in `BitmapFont`.
///
/// - Important: A value type; not for concurrent mutation.
struct Canvas {
    let width: Int
    let height: Int
    private(set) var bytes: [UInt8]

    /// A canvas filled with `color` (r, g, b).
    init(width: Int, height: Int, color: (UInt8, UInt8, UInt8)) {
        self.width = width
        self.height = height
        bytes = [UInt8](repeating: 255, count: width * height * 4)
        fill(x: 0, y: 0, width: width, height: height, color: color)
    }

    /// Fills a rectangle (clipped to the canvas).
    mutating func fill(x: Int, y: Int, width w: Int, height h: Int, color: (UInt8, UInt8, UInt8)) {
        guard x < width, y < height, x + w > 0, y + h > 0 else { return } // wholly outside: nothing to clip to
        for row in max(0, y)..<min(height, y + h) {
            for column in max(0, x)..<min(width, x + w) { set(column, row, color) }
        }
    }

    /// A light/dark checkerboard of 8-pixel squares, which shows where an image is transparent.
    mutating func checkerboard(x: Int, y: Int, width w: Int, height h: Int) {
        for row in max(0, y)..<min(height, y + h) {
            for column in max(0, x)..<min(width, x + w) {
                let light = ((column - x) / 8 + (row - y) / 8) % 2 == 0
                set(column, row, light ? (200, 200, 200) : (150, 150, 150))
            }
        }
    }

    /// Composites `buffer` (any pixel format) with its top-left corner at (x, y).
    mutating func draw(_ buffer: PixelBuffer, x: Int, y: Int) {
        let source = buffer.converted(to: .rgba8Premultiplied)
        source.withUnsafeBytes { raw in
            for row in 0..<source.height where y + row >= 0 && y + row < height {
                for column in 0..<source.width where x + column >= 0 && x + column < width {
                    let s = row * source.bytesPerRow + column * 4
                    let d = ((y + row) * width + x + column) * 4
                    let alpha = Int(raw[s + 3])
                    for channel in 0..<3 {
                        let value = Int(raw[s + channel]) + Int(bytes[d + channel]) * (255 - alpha) / 255
                        bytes[d + channel] = UInt8(min(255, value))
                    }
                }
            }
        }
    }

    /// Draws `text` in `BitmapFont` at `scale` with its top-left corner at (x, y).
    mutating func text(_ text: String, x: Int, y: Int, scale: Int = 1, color: (UInt8, UInt8, UInt8)) {
        for (index, character) in text.enumerated() {
            let left = x + index * BitmapFont.advance * scale
            for (row, bits) in BitmapFont.rows(for: character).enumerated() {
                for column in 0..<BitmapFont.glyphWidth where bits & (0x10 >> UInt8(column)) != 0 {
                    fill(x: left + column * scale, y: y + row * scale, width: scale, height: scale, color: color)
                }
            }
        }
    }

    /// The canvas as an opaque straight-alpha buffer.
    func pixelBuffer() throws -> PixelBuffer {
        try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    private mutating func set(_ x: Int, _ y: Int, _ color: (UInt8, UInt8, UInt8)) {
        let offset = (y * width + x) * 4
        bytes[offset] = color.0
        bytes[offset + 1] = color.1
        bytes[offset + 2] = color.2
        bytes[offset + 3] = 255
    }
}
