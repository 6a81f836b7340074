import ImageCodec

extension SourceTrim {
    /// The box of `buffer` left after the trim (right and bottom exclusive), or `nil` when nothing would be left
    /// (thumbor then ignores the trim).
    ///
    /// thumbor's `find_bounding_box` (thumbor/ext/filters/_bounding_box.c) step for step, quirks included, so that
    /// the same image gives the same box: each row is scanned from the left to its first pixel farther than
    /// `tolerance` from the reference (which sets the left edge, the top edge once, and the bottom edge), then from
    /// the right down to, but not including, that pixel or the right edge found so far. A row whose only far pixel
    /// is its leftmost one therefore does not move the right edge; a single far pixel or a one-pixel-wide line
    /// leaves the right edge left of the left one, and the trim is ignored, as thumbor ignores it.
    ///
    /// - Important: O(pixels) at worst, no allocation. Give it a straight (`.rgba8`) buffer to measure thumbor's
    ///   distance: straight alpha recovered from a premultiplied buffer per pixel is only an approximation (a fully
    ///   transparent pixel reads as transparent black, a faint one loses its low bits). Pure; thread-safe.
    func boundingBox(of buffer: PixelBuffer) -> SourceCrop? {
        let (width, height) = (buffer.width, buffer.height)
        guard width > 0, height > 0 else { return nil }
        let premultiplied = buffer.pixelFormat == .rgba8Premultiplied
        let stride = buffer.bytesPerRow
        // Distances compare squared, in integers: √d > t ⇔ d > t² for whole d and t (saturated past 510).
        let limit = min(tolerance, 1024) * min(tolerance, 1024)
        return buffer.withUnsafeBytes { bytes -> SourceCrop? in
            guard let base = bytes.baseAddress else { return nil }
            @inline(__always) func straight(_ offset: Int) -> (Int, Int, Int, Int) {
                let (r, g, b, a) = (Int(bytes[offset]), Int(bytes[offset + 1]), Int(bytes[offset + 2]), Int(bytes[offset + 3]))
                guard premultiplied, a < 255 else { return (r, g, b, a) }
                guard a > 0 else { return (0, 0, 0, 0) }
                return (min(255, (r * 255 + a / 2) / a), min(255, (g * 255 + a / 2) / a), min(255, (b * 255 + a / 2) / a), a)
            }
            let referenceOffset = self.reference == .topLeft ? 0 : (height - 1) * stride + (width - 1) * 4
            let reference = straight(referenceOffset)
            // A pixel stored exactly as the reference is at distance 0: the border of a trim is mostly such pixels,
            // and one word compare per pixel keeps a whole-image scan (a small object on a large uniform background,
            // or a uniform image) near the cost of reading it, even in a debug build.
            let referenceWord = base.loadUnaligned(fromByteOffset: referenceOffset, as: UInt32.self)
            @inline(__always) func isFar(_ offset: Int) -> Bool {
                if base.loadUnaligned(fromByteOffset: offset, as: UInt32.self) == referenceWord { return false }
                let p = straight(offset)
                let (dr, dg, db, da) = (p.0 - reference.0, p.1 - reference.1, p.2 - reference.2, p.3 - reference.3)
                return dr * dr + dg * dg + db * db + da * da > limit
            }
            var (left, top, right, bottom) = (width, height, 0, 0)
            for y in 0..<height {
                let row = y * stride
                var x = 0
                while x < width {
                    let offset = row + x * 4
                    if base.loadUnaligned(fromByteOffset: offset, as: UInt32.self) != referenceWord, isFar(offset) {
                        left = min(left, x)
                        top = min(top, y)
                        bottom = y
                        break
                    }
                    x += 1
                }
                var xi = width - 1
                let minimumRight = max(x, right)
                while xi > minimumRight {
                    let offset = row + xi * 4
                    if base.loadUnaligned(fromByteOffset: offset, as: UInt32.self) != referenceWord, isFar(offset) {
                        right = max(right, xi)
                        break
                    }
                    xi -= 1
                }
            }
            guard right >= left, bottom >= top else { return nil }
            return SourceCrop(left: left, top: top, right: right + 1, bottom: bottom + 1)
        }
    }
}
