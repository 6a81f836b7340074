internal import CWebImageCodecShims
internal import CWebImageLCMS
import Foundation

/// The fast path of the colour stage for matrix-shaper RGB profiles (Display P3, Adobe RGB, ProPhoto, Rec.2020,
/// any RGB profile whose relative-colorimetric transform Little CMS builds from `rXYZ`/`gXYZ`/`bXYZ` and
/// `rTRC`/`gTRC`/`bTRC`): per-channel input tables (8-bit code → linear, 1.14 fixed point), one 3×3 matrix
/// (source colorants → destination's inverse) and per-channel output tables (linear quantised to 1.14 → 8-bit
/// code), run by `wi_matrix_shaper_apply` (C, vectorised, about ten times Little CMS's own 8-bit path here).
///
/// The tables are the ones Little CMS's own 8-bit matrix-shaper optimisation makes (`cmsopt.c`: the same
/// `cmsEvalToneCurveFloat` samples, the reversed destination curves of `cmsReverseToneCurve`, the matrix product
/// in the order lcms forms it, the same fixed-point rounding), so the pixels are the ones `cmsDoTransform`
/// gives when lcms takes that path, and within rounding of it otherwise. Profile parsing stays in lcms.
///
/// Built only when that is what lcms would do: both profiles RGB with an XYZ PCS, matrix-shaper tags present,
/// no `A2B`/`D2B` (source) or `B2A`/`B2D` (destination) table that would take precedence, and black-point
/// compensation a no-op by lcms's own test (the detected black points give an empty BPC layer); a matrix lcms
/// cannot invert, a curve lcms would mark out of range or sums that could overflow 32 bits also keep lcms.
///
/// - Important: Thread-safe (immutable after `init`); the C tables are freed when the last reference goes.
final class MatrixShaperTransform: @unchecked Sendable {
    // @unchecked: `tables` is written once in init and only read afterwards (wi_matrix_shaper_apply takes a
    // const pointer), so any number of threads may apply it at once.
    private let tables: OpaquePointer

    /// lcms's `MAX_ENCODEABLE_XYZ`: the XYZ PCS encoding's range, folded into and out of its matrices.
    private static let maxEncodableXYZ = 1.0 + 32767.0 / 32768.0

    /// A 3×3 matrix, row-major (lcms's `cmsMAT3`).
    typealias Matrix = [[Double]]

    /// Makes the fast transform `source` → `destination` for 8-bit RGBA, or `nil` when lcms would not treat the
    /// pair as a plain matrix-shaper (the caller keeps Little CMS then). Not O(1): samples the curves (256 and
    /// 3 × 16385 evaluations) and runs lcms's black-point detection on both profiles.
    init?(source: cmsHPROFILE, destination: cmsHPROFILE) {
        guard Self.isPlainMatrixShaper(source, tables: Self.inputTables),
              Self.isPlainMatrixShaper(destination, tables: Self.outputTables),
              Self.blackPointCompensationIsEmpty(source: source, destination: destination),
              let sourceColorants = Self.colorants(source), let destinationColorants = Self.colorants(destination),
              let inverse = Self.inverse(destinationColorants)
        else { return nil }
        // As lcms's pipeline: the input matrix scaled into the XYZ encoding, the output one out of it, multiplied
        // (PreOptimize's _MultiplyMatrix: second × first).
        let input = sourceColorants.map { $0.map { $0 * (1.0 / Self.maxEncodableXYZ) } }
        let output = inverse.map { $0.map { $0 * Self.maxEncodableXYZ } }
        let product = Self.multiply(output, input)
        var matrix: [Int32] = []
        for row in product {
            for value in row {
                let fixed = (value * 16384.0 + 0.5).rounded(.down)
                guard abs(fixed) < 1_073_741_824.0 else { return nil }
                matrix.append(Int32(fixed))
            }
        }
        guard let shaper = Self.inputShaper(source), let encoding = Self.outputShaper(destination) else { return nil }
        let offset: [Int32] = [0, 0, 0]
        let made = shaper.withUnsafeBufferPointer { s in
            matrix.withUnsafeBufferPointer { m in
                offset.withUnsafeBufferPointer { o in
                    encoding.withUnsafeBufferPointer { e in
                        wi_matrix_shaper_create(s.baseAddress, m.baseAddress, o.baseAddress, e.baseAddress)
                    }
                }
            }
        }
        guard let made else { return nil }
        tables = made
    }

    deinit { wi_matrix_shaper_free(tables) }

    /// Converts every pixel of `buffer` (straight or opaque RGBA8) in place; the fourth byte is never touched.
    /// Wraps `wi_matrix_shaper_apply`.
    func apply(to buffer: inout PixelBuffer) {
        let (width, height, stride) = (buffer.width, buffer.height, buffer.bytesPerRow)
        buffer.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            wi_matrix_shaper_apply(tables, base.assumingMemoryBound(to: UInt8.self), width, height, stride)
        }
    }

    /// Converts `height` rows of `width` RGBA8 pixels at `rows`, `bytesPerRow` apart, in place (a band of a
    /// buffer; any number of threads may convert disjoint rows at once). Wraps `wi_matrix_shaper_apply`.
    func apply(rows: UnsafeMutablePointer<UInt8>, width: Int, height: Int, bytesPerRow: Int) {
        wi_matrix_shaper_apply(tables, rows, width, height, bytesPerRow)
    }

    /// Converts `count` RGBA8 pixels at `pixels` in place (for tests and benchmarks).
    func apply(pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        wi_matrix_shaper_apply(tables, pixels, count, 1, count * 4)
    }

    // MARK: What lcms would build

    /// Tags that take precedence over the matrix-shaper when a profile is the source (any intent, to be safe).
    private static let inputTables = [cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag,
                                      cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigDToB2Tag]
    /// Tags that take precedence over the matrix-shaper when a profile is the destination.
    private static let outputTables = [cmsSigBToA0Tag, cmsSigBToA1Tag, cmsSigBToA2Tag,
                                       cmsSigBToD0Tag, cmsSigBToD1Tag, cmsSigBToD2Tag]

    /// Whether lcms reads `profile` as curves + colorant matrix: RGB, XYZ PCS, the six tags, none of `tables`.
    static func isPlainMatrixShaper(_ profile: cmsHPROFILE, tables: [cmsTagSignature]) -> Bool {
        guard cmsGetColorSpace(profile) == cmsSigRgbData, cmsGetPCS(profile) == cmsSigXYZData,
              cmsIsMatrixShaper(profile) != 0 else { return false }
        return !tables.contains { cmsIsTag(profile, $0) != 0 }
    }

    /// Whether black-point compensation changes nothing for this pair, by lcms's own rule (cmscnvrt.c: the black
    /// points of `cmsDetectBlackPoint`/`cmsDetectDestinationBlackPoint`, the scaling they give, and
    /// `IsEmptyLayer`'s 0.002 tolerance on the matrix and the offset). Otherwise lcms inserts a matrix with an
    /// offset and no longer takes its matrix-shaper path, and neither does this.
    static func blackPointCompensationIsEmpty(source: cmsHPROFILE, destination: cmsHPROFILE) -> Bool {
        var blackIn = cmsCIEXYZ(), blackOut = cmsCIEXYZ()
        let intent = WI_LCMS_INTENT_RELATIVE
        _ = cmsDetectBlackPoint(&blackIn, source, intent, 0)
        _ = cmsDetectDestinationBlackPoint(&blackOut, destination, intent, 0)
        if blackIn.X == blackOut.X && blackIn.Y == blackOut.Y && blackIn.Z == blackOut.Z { return true }
        guard let d50 = cmsD50_XYZ()?.pointee else { return false }
        let bin = [blackIn.X, blackIn.Y, blackIn.Z], bout = [blackOut.X, blackOut.Y, blackOut.Z], white = [d50.X, d50.Y, d50.Z]
        var difference = 0.0
        for k in 0..<3 {
            let t = bin[k] - white[k]
            let scale = (bout[k] - white[k]) / t
            let offset = -white[k] * (bout[k] - bin[k]) / t / maxEncodableXYZ
            difference += abs(scale - 1) + abs(offset)
        }
        return difference < 0.002
    }

    /// The colorant matrix lcms reads (`ReadICCMatrixRGB2XYZ`): rows X, Y, Z; columns R, G, B.
    static func colorants(_ profile: cmsHPROFILE) -> Matrix? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let raw = cmsReadTag(profile, tag) else { return nil }
            columns.append(raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        let rows = [columns.map(\.X), columns.map(\.Y), columns.map(\.Z)]
        return rows.allSatisfy { $0.allSatisfy(\.isFinite) } ? rows : nil
    }

    /// lcms's `_cmsMAT3inverse` (same cofactors, same order, same determinant tolerance of 0.0001).
    static func inverse(_ a: Matrix) -> Matrix? {
        let c0 = a[1][1] * a[2][2] - a[1][2] * a[2][1]
        let c1 = -a[1][0] * a[2][2] + a[1][2] * a[2][0]
        let c2 = a[1][0] * a[2][1] - a[1][1] * a[2][0]
        let det = a[0][0] * c0 + a[0][1] * c1 + a[0][2] * c2
        guard abs(det) >= 0.0001, det.isFinite else { return nil }
        return [
            [c0 / det, (a[0][2] * a[2][1] - a[0][1] * a[2][2]) / det, (a[0][1] * a[1][2] - a[0][2] * a[1][1]) / det],
            [c1 / det, (a[0][0] * a[2][2] - a[0][2] * a[2][0]) / det, (a[0][2] * a[1][0] - a[0][0] * a[1][2]) / det],
            [c2 / det, (a[0][1] * a[2][0] - a[0][0] * a[2][1]) / det, (a[0][0] * a[1][1] - a[0][1] * a[1][0]) / det],
        ]
    }

    /// lcms's `_cmsMAT3per`: `a × b`.
    static func multiply(_ a: Matrix, _ b: Matrix) -> Matrix {
        var r: Matrix = Array(repeating: [0, 0, 0], count: 3)
        for i in 0..<3 {
            for j in 0..<3 {
                let first: Double = a[i][0] * b[0][j]
                let second: Double = a[i][1] * b[1][j]
                let third: Double = a[i][2] * b[2][j]
                r[i][j] = first + second + third
            }
        }
        return r
    }

    /// The source's TRCs at each 8-bit code in 1.14 fixed point ([3][256]), as lcms's `FillFirstShaper`;
    /// `nil` when a value is one lcms would mark out of range (≥ 131072) or not finite.
    static func inputShaper(_ profile: cmsHPROFILE) -> [Int32]? {
        var table: [Int32] = []
        table.reserveCapacity(3 * 256)
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(profile, tag) else { return nil }
            let curve = OpaquePointer(raw)
            for code in 0..<256 {
                let y = Double(cmsEvalToneCurveFloat(curve, Float(Double(code) / 255.0)))
                guard y.isFinite, abs(y) < 131072 else { return nil }
                table.append(Int32((y * 16384.0 + 0.5).rounded(.down)))
            }
        }
        return table
    }

    /// The destination's reversed TRCs (`cmsReverseToneCurve`) at each 1.14 value, as 8-bit codes ([3][16385]),
    /// as lcms's `FillSecondShaper` for 8-bit output (then its 16 → 8-bit packing).
    static func outputShaper(_ profile: cmsHPROFILE) -> [UInt8]? {
        var table: [UInt8] = []
        table.reserveCapacity(3 * Int(WI_MATRIX_SHAPER_OUTPUT_ENTRIES))
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(profile, tag), let reversed = cmsReverseToneCurve(OpaquePointer(raw)) else { return nil }
            defer { cmsFreeToneCurve(reversed) }
            for index in 0..<Int(WI_MATRIX_SHAPER_OUTPUT_ENTRIES) {
                var value = cmsEvalToneCurveFloat(reversed, Float(Double(index) / 16384.0))
                if !(value >= 0) { value = 0 }
                if value > 1 { value = 1 }
                let word = quickSaturateWord(Double(value) * 65535.0)
                table.append(UInt8(truncatingIfNeeded: (UInt32(word) * 65281 + 8_388_608) >> 24))
            }
        }
        return table
    }

    /// lcms's `_cmsQuickSaturateWord` (round half up through its fast-floor trick).
    static func quickSaturateWord(_ d: Double) -> UInt16 {
        let v = d + 0.5
        if v <= 0 { return 0 }
        if v >= 65535.0 { return 0xFFFF }
        // _cmsQuickFloor(v - 32767) + 32767: v - 32767 rounded to 16 fraction bits (nearest, ties even), floored.
        let fixed = ((v - 32767.0) * 65536.0).rounded(.toNearestOrEven)
        return UInt16(truncatingIfNeeded: Int((fixed / 65536.0).rounded(.down)) + 32767)
    }
}
