import Foundation

/// An integer affine map from destination pixel (x, y) to source pixel
/// `(originX + x * xStepX + y * yStepX, originY + x * xStepY + y * yStepY)`: the one primitive behind
/// every rotation, flip and EXIF orientation (each is a permutation of pixels).
struct PixelRemap {
    var width: Int
    var height: Int
    var originX: Int
    var originY: Int
    var xStepX: Int
    var xStepY: Int
    var yStepX: Int
    var yStepY: Int
}

extension PixelBuffer {
    /// Copies pixels through `map` into a new buffer of `map.width × map.height` in this buffer's format.
    ///
    /// Works in 64×64 tiles so that the column-order reads of a 90° rotation stay in cache.
    func remapped(_ map: PixelRemap) throws -> PixelBuffer {
        var out = try PixelBuffer(width: map.width, height: map.height, pixelFormat: pixelFormat)
        let sourceStride = bytesPerRow
        let outStride = out.bytesPerRow
        // Byte steps in the source for one step of x and of y in the destination.
        let stepX = map.xStepX * 4 + map.xStepY * sourceStride
        let stepY = map.yStepX * 4 + map.yStepY * sourceStride
        let origin = map.originX * 4 + map.originY * sourceStride
        let tile = 64
        withUnsafeBytes { source in
            out.withUnsafeMutableBytes { destination in
                guard let s = source.baseAddress, let d = destination.baseAddress else { return }
                var ty = 0
                while ty < map.height {
                    let yEnd = min(ty + tile, map.height)
                    var tx = 0
                    while tx < map.width {
                        let xEnd = min(tx + tile, map.width)
                        for y in ty..<yEnd {
                            var from = origin + y * stepY + tx * stepX
                            let row = d + y * outStride
                            for x in tx..<xEnd {
                                row.storeBytes(of: s.loadUnaligned(fromByteOffset: from, as: UInt32.self),
                                               toByteOffset: x * 4, as: UInt32.self)
                                from += stepX
                            }
                        }
                        tx = xEnd
                    }
                    ty = yEnd
                }
            }
        }
        return out
    }
}
