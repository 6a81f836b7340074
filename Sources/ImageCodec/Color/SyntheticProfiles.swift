internal import CWebImageLCMS
import Foundation

/// lcms profiles built from a description that is not an ICC profile: PNG `gAMA` (+ `cHRM`) and CICP code
/// points (primaries, white point, transfer curve), as libvips and skia build theirs.
///
/// - Important: Stateless and thread-safe; the caller closes every returned profile.
enum SyntheticProfiles {
    /// A matrix/TRC RGB profile with `chromaticities` and one tone curve (encoded → linear) for all channels.
    static func makeRGB(_ chromaticities: ImageColorSpace.Chromaticities, curve: OpaquePointer) -> cmsHPROFILE? {
        let c = chromaticities
        var white = cmsCIExyY(x: c.whiteX, y: c.whiteY, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: c.redX, y: c.redY, Y: 1),
                                        Green: cmsCIExyY(x: c.greenX, y: c.greenY, Y: 1),
                                        Blue: cmsCIExyY(x: c.blueX, y: c.blueY, Y: 1))
        var curves: [OpaquePointer?] = [curve, curve, curve]
        return curves.withUnsafeMutableBufferPointer { cmsCreateRGBProfileTHR(LittleCMS.context, &white, &primaries, $0.baseAddress) }
    }

    /// Whether chromaticities are plausible (every value in (0, 1), y > 0): `cHRM` of zeros or garbage is ignored.
    static func isPlausible(_ c: ImageColorSpace.Chromaticities) -> Bool {
        [c.whiteX, c.whiteY, c.redX, c.redY, c.greenX, c.greenY, c.blueX, c.blueY].allSatisfy { $0 > 0 && $0 < 1 }
    }

    /// A profile for PNG `gAMA` (encoding exponent) and optional `cHRM`; BT.709 primaries and D65 without `cHRM`.
    static func makeGamma(_ gamma: Double, chromaticities: ImageColorSpace.Chromaticities?) -> cmsHPROFILE? {
        guard gamma > 0.01, gamma < 100 else { return nil }
        guard let curve = cmsBuildGamma(LittleCMS.context, 1 / gamma) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        return makeRGB(chromaticities ?? .bt709, curve: curve)
    }

    /// The primaries and white point of a CICP `colour_primaries` code, or `nil` when unknown/unspecified.
    static func primaries(_ code: UInt8) -> ImageColorSpace.Chromaticities? {
        let d65 = (x: 0.3127, y: 0.3290)
        func make(_ r: (Double, Double), _ g: (Double, Double), _ b: (Double, Double),
                  white: (x: Double, y: Double) = d65) -> ImageColorSpace.Chromaticities {
            ImageColorSpace.Chromaticities(whiteX: white.x, whiteY: white.y, redX: r.0, redY: r.1, greenX: g.0,
                                           greenY: g.1, blueX: b.0, blueY: b.1)
        }
        switch code {
        case 1: return .bt709
        case 4: return make((0.67, 0.33), (0.21, 0.71), (0.14, 0.08), white: (0.310, 0.316))
        case 5: return make((0.64, 0.33), (0.29, 0.60), (0.15, 0.06))
        case 6, 7: return make((0.630, 0.340), (0.310, 0.595), (0.155, 0.070))
        case 9: return make((0.708, 0.292), (0.170, 0.797), (0.131, 0.046))
        case 11: return make((0.680, 0.320), (0.265, 0.690), (0.150, 0.060), white: (0.314, 0.351))
        case 12: return make((0.680, 0.320), (0.265, 0.690), (0.150, 0.060))
        default: return nil
        }
    }

    /// The tone curve (encoded → linear, 1.0 = SDR/reference white) of a CICP `transfer_characteristics` code,
    /// or `nil` when unknown/unspecified. PQ and HLG are tone-mapped to SDR (`HDRToneMap`).
    static func transferCurve(_ code: UInt8) -> OpaquePointer? {
        let context = LittleCMS.context
        switch code {
        case 13:  // sRGB
            let p: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            return cmsBuildParametricToneCurve(context, 4, p)
        case 1, 6, 14, 15:  // BT.709 / BT.601 / BT.2020: the inverse of the camera OETF
            let p: [Double] = [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081]
            return cmsBuildParametricToneCurve(context, 4, p)
        case 4: return cmsBuildGamma(context, 2.2)
        case 5: return cmsBuildGamma(context, 2.8)
        case 8: return cmsBuildGamma(context, 1.0)
        case 16, 18:
            let table = HDRToneMap.table(transfer: code == 16 ? .pq : .hlg)
            return table.withUnsafeBufferPointer { cmsBuildTabulatedToneCurveFloat(context, cmsUInt32Number($0.count), $0.baseAddress) }
        default: return nil
        }
    }

    /// A profile for CICP code points, or `nil` when primaries or transfer are unspecified or unknown.
    static func makeCICP(_ cicp: ImageColorSpace.CICP) -> cmsHPROFILE? {
        guard let chromaticities = primaries(cicp.colorPrimaries),
              let curve = transferCurve(cicp.transferCharacteristics) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        return makeRGB(chromaticities, curve: curve)
    }

    /// Whether CICP code points are sRGB (BT.709 primaries, sRGB transfer): no transform.
    static func isSRGB(_ cicp: ImageColorSpace.CICP) -> Bool {
        cicp.colorPrimaries == 1 && cicp.transferCharacteristics == 13
    }
}

/// The SDR rendering of HDR transfer functions (PQ, HLG), baked into a tone curve: decode to absolute light
/// (PQ: SMPTE ST 2084; HLG: BT.2100 inverse OETF with the nominal 1000 cd/m² display and system gamma 1.2 on each
/// channel), divide by the BT.2408 reference (diffuse) white of 203 cd/m² so that reference white is 1.0, then
/// keep everything up to 0.75 linear and roll the rest off smoothly toward 1.0:
/// `y = x` for `x ≤ 0.75`, else `y = 0.75 + 0.25 · t / (1 + t)` with `t = (x − 0.75) / 0.25` (slope 1 at the
/// knee, reference white → 0.875, 1000 cd/m² → 0.99). The curve runs per channel, before the gamut mapping to sRGB.
/// HDR data beyond SDR is not kept.
///
/// - Important: Stateless and thread-safe.
enum HDRToneMap {
    /// The HDR transfer functions handled.
    enum Transfer { case pq, hlg }

    /// The BT.2408 reference white, cd/m².
    static let referenceWhite = 203.0
    /// Where the roll-off starts (linear, reference white = 1).
    static let knee = 0.75

    /// Absolute luminance (cd/m²) of an encoded value 0…1.
    static func luminance(_ e: Double, transfer: Transfer) -> Double {
        switch transfer {
        case .pq:
            let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
            let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
            let p = pow(max(e, 0), 1 / m2)
            return 10000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
        case .hlg:
            let a = 0.17883277, b = 1 - 4 * 0.17883277, c = 0.5 - a * log(4 * a)
            let scene = e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
            return 1000 * pow(scene, 1.2)
        }
    }

    /// The SDR linear value (0…1) for a linear value relative to reference white.
    static func compress(_ x: Double) -> Double {
        guard x > knee else { return max(x, 0) }
        let t = (x - knee) / (1 - knee)
        return knee + (1 - knee) * t / (1 + t)
    }

    /// 4096 samples of encoded → SDR linear.
    static func table(transfer: Transfer) -> [Float] {
        (0..<4096).map { i in Float(compress(luminance(Double(i) / 4095, transfer: transfer) / referenceWhite)) }
    }
}
