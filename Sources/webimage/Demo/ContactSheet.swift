import Foundation
import ImageCodec

/// Draws the demo's contact sheet: every image's first frame as a thumbnail in a grid, labelled with its
/// format and size, over a checkerboard where it is transparent.
///
/// - Important: Stateless; thread-safe.
enum ContactSheet {
    /// One cell: the two label lines and the first frame (`nil`: the image failed, drawn as a red cell).
    struct Entry {
        var title: String
        var detail: String
        var frame: PixelBuffer?
    }

    static let thumbnail = 150
    static let cellWidth = 176
    static let cellHeight = thumbnail + 34
    static let margin = 12
    static let headerHeight = 40

    /// The sheet as an opaque RGBA buffer, `columns` cells wide.
    static func render(_ entries: [Entry], title: String, columns: Int = 8) throws -> PixelBuffer {
        let columns = max(1, min(columns, entries.count))
        let rows = (entries.count + columns - 1) / columns
        var canvas = Canvas(width: margin * 2 + columns * cellWidth,
                            height: headerHeight + margin + rows * cellHeight, color: (32, 34, 40))
        canvas.text(title, x: margin, y: 12, scale: 2, color: (240, 240, 240))
        for (index, entry) in entries.enumerated() {
            let left = margin + (index % columns) * cellWidth
            let top = headerHeight + (index / columns) * cellHeight
            try drawCell(entry, left: left, top: top, on: &canvas)
        }
        return try canvas.pixelBuffer()
    }

    private static func drawCell(_ entry: Entry, left: Int, top: Int, on canvas: inout Canvas) throws {
        let boxX = left + (cellWidth - thumbnail) / 2
        if let frame = entry.frame {
            let thumb = try frame.resized(maxPixelSize: thumbnail)
            let x = boxX + (thumbnail - thumb.width) / 2
            let y = top + (thumbnail - thumb.height) / 2
            if !frame.isOpaque { canvas.checkerboard(x: x, y: y, width: thumb.width, height: thumb.height) }
            canvas.draw(thumb, x: x, y: y)
        } else {
            canvas.fill(x: boxX, y: top, width: thumbnail, height: thumbnail, color: (120, 20, 20))
            canvas.text("FAILED", x: boxX + (thumbnail - BitmapFont.width(of: "FAILED", scale: 2)) / 2,
                        y: top + thumbnail / 2 - 7, scale: 2, color: (255, 220, 220))
        }
        let lines = [(entry.title, (235, 235, 235)), (entry.detail, (160, 200, 255))] as [(String, (UInt8, UInt8, UInt8))]
        for (number, (text, color)) in lines.enumerated() {
            let clipped = String(text.prefix((cellWidth - 4) / BitmapFont.advance))
            canvas.text(clipped, x: left + (cellWidth - BitmapFont.width(of: clipped)) / 2,
                        y: top + thumbnail + 6 + number * 11, color: color)
        }
    }
}
