/// Draws APNG frames onto an RGBA8 canvas and applies their disposal (APNG spec §4.3).
///
/// Works in the canvas's own pixel format, so straight-alpha decodes stay lossless (no premultiply round trip).
///
/// - Important: Stateless and thread-safe; mutates only the canvas it is given.
enum APNGCompositor {
    /// Draws `frame` (the frame's size, the canvas's pixel format) at the control's offset with its blend op.
    static func blend(_ frame: PixelBuffer, onto canvas: inout PixelBuffer, control: APNGFrameControl) {
        let premultiplied = canvas.pixelFormat == .rgba8Premultiplied
        let canvasStride = canvas.bytesPerRow
        let frameStride = frame.bytesPerRow
        let rowBytes = control.width * 4
        frame.withUnsafeBytes { src in
            canvas.withUnsafeMutableBytes { dst in
                for row in 0..<control.height {
                    let s = src.baseAddress! + row * frameStride
                    let d = dst.baseAddress! + (control.y + row) * canvasStride + control.x * 4
                    if control.blend == .source {
                        d.copyMemory(from: s, byteCount: rowBytes)
                        continue
                    }
                    let sp = s.assumingMemoryBound(to: UInt8.self)
                    let dp = d.assumingMemoryBound(to: UInt8.self)
                    for i in stride(from: 0, to: rowBytes, by: 4) {
                        let alpha = UInt32(sp[i + 3])
                        if alpha == 0 { continue }
                        if alpha == 255 {
                            dp[i] = sp[i]; dp[i + 1] = sp[i + 1]; dp[i + 2] = sp[i + 2]; dp[i + 3] = 255
                            continue
                        }
                        if premultiplied {
                            // Premultiplied "over": out = src + dst × (1 − αsrc), rounded.
                            let inverse = 255 - alpha
                            for c in 0..<4 {
                                let v = UInt32(dp[i + c]) * inverse + 128
                                dp[i + c] = UInt8(min(255, UInt32(sp[i + c]) + ((v + (v >> 8)) >> 8)))
                            }
                        } else {
                            overStraight(sp + i, dp + i, alpha)
                        }
                    }
                }
            }
        }
    }

    /// Straight-alpha "over" of one pixel: αo = αs + αd(1 − αs), Co = (Cs·αs + Cd·αd(1 − αs)) / αo.
    @inline(__always)
    private static func overStraight(_ sp: UnsafePointer<UInt8>, _ dp: UnsafeMutablePointer<UInt8>, _ alpha: UInt32) {
        let da = UInt32(dp[3])
        let dstWeight = da * (255 - alpha)              // scaled by 255²
        let outAlpha255 = alpha * 255 + dstWeight       // αo scaled by 255²
        guard outAlpha255 > 0 else { return }
        for c in 0..<3 {
            let value = UInt32(sp[c]) * alpha * 255 + UInt32(dp[c]) * dstWeight
            dp[c] = UInt8(min(255, (value + outAlpha255 / 2) / outAlpha255))
        }
        dp[3] = UInt8(min(255, (outAlpha255 + 127) / 255))
    }

    /// Clears the control's rectangle to transparent black (`dispose_op` background).
    static func clear(_ canvas: inout PixelBuffer, control: APNGFrameControl) {
        let stride = canvas.bytesPerRow
        canvas.withUnsafeMutableBytes { dst in
            for row in 0..<control.height {
                (dst.baseAddress! + (control.y + row) * stride + control.x * 4).initializeMemory(
                    as: UInt8.self, repeating: 0, count: control.width * 4)
            }
        }
    }

    /// A copy of the control's rectangle of `canvas` (kept for `dispose_op` previous).
    static func copyRect(_ canvas: PixelBuffer, control: APNGFrameControl) throws -> PixelBuffer {
        var saved = try PixelBuffer(width: control.width, height: control.height, pixelFormat: canvas.pixelFormat)
        let (srcStride, dstStride) = (canvas.bytesPerRow, saved.bytesPerRow)
        canvas.withUnsafeBytes { src in
            saved.withUnsafeMutableBytes { dst in
                for row in 0..<control.height {
                    (dst.baseAddress! + row * dstStride).copyMemory(
                        from: src.baseAddress! + (control.y + row) * srcStride + control.x * 4, byteCount: control.width * 4)
                }
            }
        }
        return saved
    }

    /// Puts a rectangle saved by `copyRect` back.
    static func restore(_ saved: PixelBuffer, into canvas: inout PixelBuffer, control: APNGFrameControl) {
        var copy = control
        copy.blend = .source
        blend(saved, onto: &canvas, control: copy)
    }
}
