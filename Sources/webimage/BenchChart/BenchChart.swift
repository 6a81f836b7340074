import Foundation
import WebImage

/// Renders benchmark comparisons as horizontal bars on a log scale (0.1× … 10×), with the suite and name of
/// each comparison written beside its bar.
enum BenchChart {
    /// The fields of one bench-results.json entry the chart needs.
    struct Row: Decodable {
        var suite: String
        var name: String
        var ours: Double
        var peer: Double?
        var peerName: String?
        /// The unit of `ours` and `peer` (`req/s`, `ms`, `MB`).
        var unit: String?
        var higherIsBetter: Bool
        var goalMet: Bool?

        /// ours ÷ peer for times, peer ÷ ours for throughputs (below 1: we are faster).
        var costRatio: Double? {
            guard let peer, peer > 0, ours > 0 else { return nil }
            return higherIsBetter ? peer / ours : ours / peer
        }
    }

    static func render(_ rows: [Row]) throws -> Data {
        let scale = 2
        let labelWidth = 74 * BitmapFont.advance * scale
        let barArea = 520
        let rowHeight = 11 * scale
        let top = 40 * scale / 2 + 20
        let width = 16 + labelWidth + barArea + 90
        let height = top + rows.count * rowHeight + 40
        var canvas = Canvas(width: width, height: height, color: (250, 250, 250))
        canvas.text("COST RATIO (OURS / PEER), LOG SCALE - LEFT OF 1X IS FASTER", x: 16, y: 12, scale: scale, color: (30, 30, 30))
        let originX = 16 + labelWidth
        // log10 from 0.1 (−1) to 10 (+1) across the bar area.
        func xPosition(_ ratio: Double) -> Int {
            let clamped = min(max(ratio, 0.1), 10)
            return originX + Int((log10(clamped) + 1) / 2 * Double(barArea))
        }
        for tick in [0.1, 0.5, 1, 2, 10] {
            let x = xPosition(tick)
            canvas.fill(x: x, y: top - 4, width: tick == 1 ? 2 : 1, height: rows.count * rowHeight + 8, color: tick == 1 ? (40, 40, 40) : (200, 200, 200))
            let label = tick == 0.1 ? "0.1X" : tick == 0.5 ? "0.5X" : "\(Int(tick))X"
            canvas.text(label, x: x - BitmapFont.width(of: label, scale: scale) / 2, y: top + rows.count * rowHeight + 10,
                        scale: scale, color: (90, 90, 90))
        }
        for (index, row) in rows.enumerated() {
            guard let ratio = row.costRatio else { continue }
            let y = top + index * rowHeight
            let label = String("\(row.suite): \(row.name)".prefix(74)).uppercased()
            canvas.text(label, x: 16, y: y + 2, scale: scale, color: (40, 40, 40))
            let one = xPosition(1)
            let end = xPosition(ratio)
            let color: (UInt8, UInt8, UInt8) = row.goalMet == true ? (60, 170, 90) : row.goalMet == false ? (210, 70, 60) : (150, 150, 160)
            canvas.fill(x: min(one, end), y: y + 2, width: max(2, abs(end - one)), height: rowHeight - 5, color: color)
            let value = String(format: "%.2fX", ratio)
            canvas.text(value, x: originX + barArea + 6, y: y + 2, scale: scale, color: (40, 40, 40))
        }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(try canvas.pixelBuffer())
        return try encoder.encode()
    }
}
