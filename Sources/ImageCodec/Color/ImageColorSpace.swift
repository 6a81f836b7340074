import Foundation

/// What an image file said about its colours: an ICC profile, CICP code points, PNG `sRGB`, `gAMA` and
/// `cHRM`, or nothing (`Image.colorSpace` is then `nil`). It describes the source, whatever the decoder did with
/// it (see `ColorManagement`).
///
/// - Important: A value type; thread-safe.
public struct ImageColorSpace: Sendable, Hashable {
    /// The embedded ICC profile's bytes (JPEG APP2 chunks reassembled, PNG `iCCP` inflated, WebP `ICCP`,
    /// AVIF/HEIF `colr` `prof`), as found; `nil` when there is none or its chunks did not add up.
    public var iccProfile: Data?
    /// CICP code points (ITU-T H.273): PNG `cICP`, AVIF/HEIF `colr` `nclx`. `nil` when absent.
    public var cicp: CICP?
    /// Whether the file declared sRGB outright (PNG `sRGB` chunk). Default `false`.
    public var isDeclaredSRGB: Bool
    /// PNG `gAMA`: the encoding exponent (1/2.2 ≈ 0.45455 for a typical image). `nil` when absent.
    public var gamma: Double?
    /// PNG `cHRM`: white point and primaries as CIE xy. `nil` when absent.
    public var chromaticities: Chromaticities?

    /// Makes a description; every field defaults to "absent".
    public init(iccProfile: Data? = nil, cicp: CICP? = nil, isDeclaredSRGB: Bool = false, gamma: Double? = nil,
                chromaticities: Chromaticities? = nil) {
        self.iccProfile = iccProfile
        self.cicp = cicp
        self.isDeclaredSRGB = isDeclaredSRGB
        self.gamma = gamma
        self.chromaticities = chromaticities
    }

    /// Whether nothing at all was said.
    public var isEmpty: Bool {
        iccProfile == nil && cicp == nil && !isDeclaredSRGB && gamma == nil && chromaticities == nil
    }

    /// CICP code points (ITU-T H.273 / ISO 23091-2).
    public struct CICP: Sendable, Hashable {
        /// Colour primaries (1 BT.709, 9 BT.2020, 11 DCI-P3, 12 Display P3, 2 unspecified, …).
        public var colorPrimaries: UInt8
        /// Transfer characteristics (13 sRGB, 1/6/14/15 BT.709, 8 linear, 16 PQ, 18 HLG, 2 unspecified, …).
        public var transferCharacteristics: UInt8
        /// Matrix coefficients (0 identity/RGB, 1 BT.709, 6 BT.601, 9 BT.2020 NCL, …): the YUV decoder's job.
        public var matrixCoefficients: UInt8
        /// Full range (`true`) or limited/video range: the YUV decoder's job.
        public var isFullRange: Bool

        /// Makes code points.
        public init(colorPrimaries: UInt8, transferCharacteristics: UInt8, matrixCoefficients: UInt8, isFullRange: Bool) {
            self.colorPrimaries = colorPrimaries
            self.transferCharacteristics = transferCharacteristics
            self.matrixCoefficients = matrixCoefficients
            self.isFullRange = isFullRange
        }
    }

    /// A white point and three primaries as CIE 1931 xy chromaticities.
    public struct Chromaticities: Sendable, Hashable {
        /// White point x, y.
        public var white: (x: Double, y: Double) { (whiteX, whiteY) }
        /// The raw values: white, red, green, blue, each x then y.
        public var whiteX, whiteY, redX, redY, greenX, greenY, blueX, blueY: Double

        /// Makes chromaticities from the eight xy values.
        public init(whiteX: Double, whiteY: Double, redX: Double, redY: Double, greenX: Double, greenY: Double,
                    blueX: Double, blueY: Double) {
            (self.whiteX, self.whiteY, self.redX, self.redY) = (whiteX, whiteY, redX, redY)
            (self.greenX, self.greenY, self.blueX, self.blueY) = (greenX, greenY, blueX, blueY)
        }

        /// BT.709 / sRGB primaries with the D65 white point.
        public static let bt709 = Chromaticities(whiteX: 0.3127, whiteY: 0.3290, redX: 0.64, redY: 0.33,
                                                 greenX: 0.30, greenY: 0.60, blueX: 0.15, blueY: 0.06)
    }
}
