import Foundation
import WebImage

extension BenchChart {
    /// Renders the rows of one suite as pairs of bars, ours above the peer's, each pair scaled to its larger
    /// figure (the rows mix units: req/s, ms, MB), with both figures written beside their bars. Used for the
    /// service benchmark (`webimage bench-chart --suite service`): req/s and p99 per run, ours vs thumbor.
    static func renderPairs(_ rows: [Row], title: String) throws -> Data {
        let scale = 2
        let labelColumns = 36
        let labelWidth = labelColumns * BitmapFont.advance * scale
        let barArea = 420
        let barHeight = 8 * scale
        let pairHeight = 2 * barHeight + 4 + 10 * scale
        let top = 60
        let width = 16 + labelWidth + barArea + 500
        let height = top + rows.count * pairHeight + 16
        var canvas = Canvas(width: width, height: height, color: (250, 250, 250))
        canvas.text(title.uppercased(), x: 16, y: 12, scale: scale, color: (30, 30, 30))
        let ours: (UInt8, UInt8, UInt8) = (60, 110, 200)
        let peer: (UInt8, UInt8, UInt8) = (170, 170, 175)
        let peerName = rows.compactMap(\.peerName).first ?? "peer"
        canvas.fill(x: 16, y: 36, width: 14, height: 14, color: ours)
        canvas.text("OURS (RED: GOAL MISSED)", x: 36, y: 37, scale: scale, color: (40, 40, 40))
        let legendX = 36 + BitmapFont.width(of: "OURS (RED: GOAL MISSED)", scale: scale) + 24
        canvas.fill(x: legendX, y: 36, width: 14, height: 14, color: peer)
        canvas.text(String(peerName.prefix(40)).uppercased(), x: legendX + 20, y: 37, scale: scale, color: (40, 40, 40))
        let originX = 16 + labelWidth
        for (index, row) in rows.enumerated() {
            guard let peerValue = row.peer else { continue }
            let y = top + index * pairHeight
            let unit = row.unit ?? ""
            canvas.text(String(row.name.prefix(labelColumns)).uppercased(), x: 16, y: y + barHeight - 4,
                        scale: scale, color: (40, 40, 40))
            // A row compared with another peer than the legend's names it beside the grey bar.
            let otherPeer = row.peerName.flatMap { $0 == peerName ? nil : " (\($0))" } ?? ""
            let largest = max(row.ours, peerValue, .leastNonzeroMagnitude)
            let bars: [(Double, (UInt8, UInt8, UInt8))] = [
                (row.ours, row.goalMet == false ? (210, 70, 60) : ours), (peerValue, peer),
            ]
            for (offset, (value, color)) in bars.enumerated() {
                let barY = y + offset * (barHeight + 4)
                let length = max(2, Int(value / largest * Double(barArea)))
                canvas.fill(x: originX, y: barY, width: length, height: barHeight, color: color)
                let text = Self.figure(value) + " " + unit + (offset == 1 ? otherPeer : "")
                canvas.text(text.uppercased(), x: originX + length + 8, y: barY + 1, scale: scale, color: (40, 40, 40))
            }
        }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(try canvas.pixelBuffer())
        return try encoder.encode()
    }

    /// A figure with as many digits as it deserves: 18325, 352, 82.4, 2.41.
    static func figure(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}
