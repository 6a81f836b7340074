/// How the pixels a decoder produced hold their colour, for the colour stage. Every layout is 4 bytes per
/// pixel in a `PixelBuffer` row; the stage writes RGB(A) back in place.
enum ColorLayout: UInt8, Sendable, Hashable {
    /// R, G, B, alpha (straight or opaque): RGB profiles. Alpha is never touched.
    case rgba
    /// Grey already expanded to R = G = B, alpha in the fourth byte: grey profiles (read from the first byte).
    case greyInRGBA
    /// C, M, Y, K (0 = no ink): CMYK profiles; alpha becomes 255.
    case cmyk
    /// C, M, Y, K stored inverted (255 = no ink), Adobe's JPEG CMYK/YCCK: CMYK profiles; alpha becomes 255.
    case invertedCMYK
    /// R, G, B, alpha at 16 bits per channel (native byte order), converted into an 8-bit RGBA buffer (not in
    /// place): deep sources are converted before they are reduced to 8 bits. Alpha is copied (rescaled).
    case rgba16

    /// The profile channel count this layout needs (3 RGB, 1 grey, 4 CMYK).
    var profileChannels: Int {
        switch self {
        case .rgba, .rgba16: return 3
        case .greyInRGBA: return 1
        case .cmyk, .invertedCMYK: return 4
        }
    }
}
