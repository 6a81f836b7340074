import Foundation

/// ThumbHash (evanw/thumbhash): about 25 bytes holding an image's aspect ratio, average colour, alpha and a
/// few DCT components of luminance, yellow-blue, red-green (and alpha), decoded back into a blurred
/// placeholder of up to 32 pixels a side. Implemented from the reference's description and definition.
///
/// ```swift
/// let hash = try ThumbHash.encode(thumbnail)        // thumbnail at most 100 × 100
/// let placeholder = try ThumbHash.decode(hash)
/// ```
///
/// - Important: Stateless; thread-safe.
public enum ThumbHash {
    /// The ThumbHash of an image of at most 100 × 100 pixels (premultiplied pixels are un-premultiplied first).
    ///
    /// - Throws: `PlaceholderHashError.invalidImageSize` over 100 pixels a side (`Image.thumbHash()` scales first).
    /// - Important: O(pixels × 40); pure, thread-safe.
    public static func encode(_ buffer: PixelBuffer) throws(PlaceholderHashError) -> [UInt8] {
        let (w, h) = (buffer.width, buffer.height)
        guard w <= 100, h <= 100 else { throw .invalidImageSize(width: w, height: h) }
        let image = buffer.converted(to: .rgba8)
        let count = w * h
        var rgba = [Double](repeating: 0, count: count * 4)
        image.withUnsafeBytes { bytes in
            for y in 0..<h {
                for x in 0..<w {
                    let o = y * image.bytesPerRow + x * 4, i = (y * w + x) * 4
                    for c in 0..<4 { rgba[i + c] = Double(bytes[o + c]) }
                }
            }
        }
        // The average colour, weighted by alpha.
        var (avgR, avgG, avgB, avgA) = (0.0, 0.0, 0.0, 0.0)
        for i in 0..<count {
            let alpha = rgba[i * 4 + 3] / 255
            avgR += alpha / 255 * rgba[i * 4]
            avgG += alpha / 255 * rgba[i * 4 + 1]
            avgB += alpha / 255 * rgba[i * 4 + 2]
            avgA += alpha
        }
        if avgA > 0 { avgR /= avgA; avgG /= avgA; avgB /= avgA }
        let hasAlpha = avgA < Double(count)
        let lLimit = hasAlpha ? 5.0 : 7.0
        let lx = max(1, round(lLimit * Double(w) / Double(max(w, h))))
        let ly = max(1, round(lLimit * Double(h) / Double(max(w, h))))
        // LPQA, composited over the average colour.
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let alpha = rgba[i * 4 + 3] / 255
            let r = avgR * (1 - alpha) + alpha / 255 * rgba[i * 4]
            let g = avgG * (1 - alpha) + alpha / 255 * rgba[i * 4 + 1]
            let b = avgB * (1 - alpha) + alpha / 255 * rgba[i * 4 + 2]
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }
        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0, ac: [Double] = [], scale = 0.0
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(count)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lChannel = encodeChannel(l, max(3, Int(lx)), max(3, Int(ly)))
        let pChannel = encodeChannel(p, 3, 3)
        let qChannel = encodeChannel(q, 3, 3)
        let aChannel = hasAlpha ? encodeChannel(a, 5, 5) : (dc: 0, ac: [], scale: 0)

        let isLandscape = w > h
        let header24 = Int(round(63 * lChannel.dc)) | Int(round(31.5 + 31.5 * pChannel.dc)) << 6
            | Int(round(31.5 + 31.5 * qChannel.dc)) << 12 | Int(round(31 * lChannel.scale)) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 = Int(isLandscape ? ly : lx) | Int(round(63 * pChannel.scale)) << 3
            | Int(round(63 * qChannel.scale)) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8((header24 >> 16) & 255),
                             UInt8(header16 & 255), UInt8((header16 >> 8) & 255)]
        if hasAlpha { hash.append(UInt8(Int(round(15 * aChannel.dc)) | Int(round(15 * aChannel.scale)) << 4)) }
        let acStart = hash.count
        var acIndex = 0
        for ac in hasAlpha ? [lChannel.ac, pChannel.ac, qChannel.ac, aChannel.ac] : [lChannel.ac, pChannel.ac, qChannel.ac] {
            for f in ac {
                let at = acStart + acIndex >> 1
                if at == hash.count { hash.append(0) }
                hash[at] |= UInt8(Int(round(15 * f)) << ((acIndex & 1) << 2))
                acIndex += 1
            }
        }
        return hash
    }

    /// The placeholder a ThumbHash stands for: up to 32 pixels a side at the hash's aspect ratio, straight `rgba8`.
    ///
    /// - Throws: `PlaceholderHashError.malformedHash` for a hash shorter than its header says.
    /// - Important: O(32 × 32 × components); pure, thread-safe.
    public static func decode(_ hash: [UInt8]) throws(PlaceholderHashError) -> PixelBuffer {
        guard hash.count >= 5 else { throw .malformedHash("ThumbHash of \(hash.count) bytes, at least 5 expected") }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double((header24 >> 6) & 63) / 31.5 - 1
        let qDC = Double((header24 >> 12) & 63) / 31.5 - 1
        let lScale = Double((header24 >> 18) & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double((header16 >> 3) & 63) / 63
        let qScale = Double((header16 >> 9) & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        guard !hasAlpha || hash.count >= 6 else { throw .malformedHash("ThumbHash with alpha of 5 bytes") }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0
        let acStart = hasAlpha ? 6 : 5
        var acIndex = 0
        func decodeChannel(_ nx: Int, _ ny: Int, _ scale: Double) throws(PlaceholderHashError) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let at = acStart + acIndex >> 1
                    guard at < hash.count else { throw .malformedHash("ThumbHash of \(hash.count) bytes is truncated") }
                    ac.append((Double((Int(hash[at]) >> ((acIndex & 1) << 2)) & 15) / 7.5 - 1) * scale)
                    acIndex += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = try decodeChannel(lx, ly, lScale)
        // Saturation boosted 1.25× to make up for quantisation, as the reference does.
        let pAC = try decodeChannel(3, 3, pScale * 1.25)
        let qAC = try decodeChannel(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? try decodeChannel(5, 5, aScale) : []

        let ratio = approximateAspectRatio(hash)
        let w = Int(round(ratio > 1 ? 32 : 32 * ratio)), h = Int(round(ratio > 1 ? 32 / ratio : 32))
        var out: PixelBuffer
        do { out = try PixelBuffer(width: max(w, 1), height: max(h, 1), pixelFormat: .rgba8) } catch {
            throw .malformedHash("ThumbHash aspect ratio \(ratio)")
        }
        let (nx, ny) = (max(lx, hasAlpha ? 5 : 3), max(ly, hasAlpha ? 5 : 3))
        var fx = [Double](repeating: 0, count: nx), fy = [Double](repeating: 0, count: ny)
        let (stride, outWidth, outHeight) = (out.bytesPerRow, out.width, out.height)
        out.withUnsafeMutableBytes { bytes in
            for y in 0..<outHeight {
                for x in 0..<outWidth {
                    var (l, p, q, a) = (lDC, pDC, qDC, aDC)
                    for cx in 0..<nx { fx[cx] = cos(Double.pi / Double(outWidth) * (Double(x) + 0.5) * Double(cx)) }
                    for cy in 0..<ny { fy[cy] = cos(Double.pi / Double(outHeight) * (Double(y) + 0.5) * Double(cy)) }
                    var j = 0
                    for cy in 0..<ly {
                        var cx = cy > 0 ? 0 : 1
                        let fy2 = fy[cy] * 2
                        while cx * ly < lx * (ly - cy) { l += lAC[j] * fx[cx] * fy2; j += 1; cx += 1 }
                    }
                    j = 0
                    for cy in 0..<3 {
                        var cx = cy > 0 ? 0 : 1
                        let fy2 = fy[cy] * 2
                        while cx < 3 - cy {
                            let f = fx[cx] * fy2
                            p += pAC[j] * f
                            q += qAC[j] * f
                            j += 1; cx += 1
                        }
                    }
                    if hasAlpha {
                        j = 0
                        for cy in 0..<5 {
                            var cx = cy > 0 ? 0 : 1
                            let fy2 = fy[cy] * 2
                            while cx < 5 - cy { a += aAC[j] * fx[cx] * fy2; j += 1; cx += 1 }
                        }
                    }
                    let b = l - 2.0 / 3 * p
                    let r = (3 * l - b + q) / 2
                    let g = r - q
                    let o = y * stride + x * 4
                    // The reference stores into a Uint8Array, which truncates.
                    bytes[o] = byte(r); bytes[o + 1] = byte(g); bytes[o + 2] = byte(b); bytes[o + 3] = byte(a)
                }
            }
        }
        return out
    }

    /// The hash's average colour (straight, each 0…1).
    ///
    /// - Throws: `PlaceholderHashError.malformedHash` for a hash under its header's length.
    public static func averageColor(_ hash: [UInt8]) throws(PlaceholderHashError) -> (r: Double, g: Double, b: Double, a: Double) {
        guard hash.count >= 5 else { throw .malformedHash("ThumbHash of \(hash.count) bytes, at least 5 expected") }
        let header = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let l = Double(header & 63) / 63
        let p = Double((header >> 6) & 63) / 31.5 - 1
        let q = Double((header >> 12) & 63) / 31.5 - 1
        let hasAlpha = header >> 23 != 0
        guard !hasAlpha || hash.count >= 6 else { throw .malformedHash("ThumbHash with alpha of 5 bytes") }
        let a = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let b = l - 2.0 / 3 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        return (max(0, min(1, r)), max(0, min(1, g)), max(0, min(1, b)), a)
    }

    /// The hash's approximate aspect ratio (width / height).
    static func approximateAspectRatio(_ hash: [UInt8]) -> Double {
        let header = Int(hash[3])
        let hasAlpha = hash[2] & 0x80 != 0
        let isLandscape = hash[4] & 0x80 != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : header & 7
        let ly = isLandscape ? header & 7 : (hasAlpha ? 5 : 7)
        // A hostile header may say 0 on an axis; the decoder treats it as 1.
        return Double(max(lx, 1)) / Double(max(ly, 1))
    }

    /// JavaScript's `Math.round`: halves go up.
    static func round(_ v: Double) -> Double { (v + 0.5).rounded(.down) }

    static func byte(_ v: Double) -> UInt8 { UInt8(max(0, 255 * min(1, v.isNaN ? 0 : v)).rounded(.towardZero)) }
}
