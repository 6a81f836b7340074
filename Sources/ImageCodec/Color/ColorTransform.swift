internal import CWebImageLCMS
import Foundation

/// One transform from a source layout to RGBA8, applied in place to 4-byte pixels: Little CMS, or for 8-bit RGB
/// between two matrix-shaper profiles the fast path (`MatrixShaperTransform`, lcms's own tables).
///
/// Created with `cmsFLAGS_NOCACHE` (lcms's only per-transform mutable state is its one-pixel cache), so one
/// transform may run on many threads at once; the cache hands out the same instance to every decode.
///
/// - Important: Thread-safe (immutable); the transform is deleted when the last reference goes.
final class ColorTransform: @unchecked Sendable {
    // @unchecked: `engine` is created once and only read: cmsDoTransformLineStride is safe to call concurrently
    // on a NOCACHE transform, and the fast path's tables are immutable.
    private enum Engine {
        case littleCMS(cmsHTRANSFORM)
        case matrixShaper(MatrixShaperTransform)
    }

    private let engine: Engine
    let layout: ColorLayout

    /// Whether the fast matrix-shaper path runs this transform (not Little CMS).
    var isMatrixShaper: Bool {
        if case .matrixShaper = engine { return true }
        return false
    }

    /// Makes the transform `source` → `destination` for `layout` (relative colorimetric, BPC), or `nil` when
    /// lcms refuses. For `.rgba` between two plain matrix-shaper profiles the fast path is used unless
    /// `allowsMatrixShaper` is false (tests compare the two). Wraps `cmsCreateTransformTHR` otherwise. The
    /// profiles stay owned by the caller.
    init?(source: cmsHPROFILE, destination: cmsHPROFILE, layout: ColorLayout, allowsMatrixShaper: Bool = true) {
        if allowsMatrixShaper, layout == .rgba, let fast = MatrixShaperTransform(source: source, destination: destination) {
            engine = .matrixShaper(fast)
            self.layout = layout
            return
        }
        let input: cmsUInt32Number
        switch layout {
        case .rgba: input = WI_LCMS_TYPE_RGBA_8
        case .greyInRGBA: input = WI_LCMS_TYPE_GRAY_IN_RGBA_8
        case .cmyk: input = WI_LCMS_TYPE_CMYK_8
        case .invertedCMYK: input = WI_LCMS_TYPE_CMYK_8_REV
        case .rgba16: input = WI_LCMS_TYPE_RGBA_16
        }
        let flags = layout == .rgba16 ? WI_LCMS_FLAGS | WI_LCMS_FLAG_COPY_ALPHA : WI_LCMS_FLAGS
        guard let handle = cmsCreateTransformTHR(LittleCMS.context, source, input, destination, WI_LCMS_TYPE_RGBA_8,
                                                 WI_LCMS_INTENT_RELATIVE, flags) else { return nil }
        engine = .littleCMS(handle)
        self.layout = layout
    }

    deinit {
        if case .littleCMS(let handle) = engine { cmsDeleteTransform(handle) }
    }

    /// Converts 16-bit RGBA rows (`.rgba16` transforms only) into `buffer`'s 8-bit pixels (same size), alpha
    /// rescaled. Wraps `cmsDoTransformLineStride`.
    func apply(rgba16 source: UnsafeRawBufferPointer, bytesPerRow: Int, into buffer: inout PixelBuffer) {
        precondition(layout == .rgba16 && bytesPerRow >= buffer.width * 8 && source.count >= bytesPerRow * buffer.height)
        guard case .littleCMS(let handle) = engine else { return }
        let (width, height, stride) = (buffer.width, buffer.height, buffer.bytesPerRow)
        buffer.withUnsafeMutableBytes { out in
            guard let base = out.baseAddress, let input = source.baseAddress else { return }
            cmsDoTransformLineStride(handle, input, base, cmsUInt32Number(width), cmsUInt32Number(height),
                                     cmsUInt32Number(bytesPerRow), cmsUInt32Number(stride), 0, 0)
        }
    }

    /// Converts every pixel of `buffer` in place. Alpha stays as it is for RGB and grey layouts and becomes 255
    /// for CMYK. Wraps `cmsDoTransformLineStride`.
    func apply(to buffer: inout PixelBuffer) {
        let (width, height, stride) = (buffer.width, buffer.height, buffer.bytesPerRow)
        guard layout != .rgba16 else { return }  // not an in-place layout: apply(rgba16:bytesPerRow:into:)
        buffer.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            apply(rows: base, width: width, height: height, bytesPerRow: stride)
        }
    }

    /// Converts `height` rows of `width` 4-byte pixels at `rows` (`bytesPerRow` apart) in place, as
    /// `apply(to:)` does for a whole buffer: the colour stage's band pipeline converts a decoder's rows band by
    /// band with it. Any number of threads may convert disjoint rows at once.
    func apply(rows: UnsafeMutableRawPointer, width: Int, height: Int, bytesPerRow: Int) {
        guard layout != .rgba16, width > 0, height > 0 else { return }
        let handle: cmsHTRANSFORM
        switch engine {
        case .matrixShaper(let fast):
            fast.apply(rows: rows.assumingMemoryBound(to: UInt8.self), width: width, height: height, bytesPerRow: bytesPerRow)
            return
        case .littleCMS(let lcms):
            handle = lcms
        }
        cmsDoTransformLineStride(handle, rows, rows, cmsUInt32Number(width), cmsUInt32Number(height),
                                 cmsUInt32Number(bytesPerRow), cmsUInt32Number(bytesPerRow), 0, 0)
        guard layout == .cmyk || layout == .invertedCMYK else { return }
        for y in 0..<height {
            let row = rows.advanced(by: y * bytesPerRow).assumingMemoryBound(to: UInt8.self)
            var x = 3
            while x < width * 4 { row[x] = 255; x += 4 }
        }
    }
}
