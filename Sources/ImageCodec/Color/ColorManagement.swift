import Foundation

/// What a decoder does with the colour description of the file (ICC profile, CICP, PNG gamma/chromaticities).
///
/// ```swift
/// let image = try ImageDecoder.decode(data)                                        // sRGB pixels (default)
/// let raw = try ImageDecoder.decode(data, options: DecodeOptions(colorManagement: .preserve))
/// ```
///
/// Conversion runs through Little CMS 2: relative colorimetric intent with black-point compensation, on the
/// pixels the decoder produced (after a DCT-scaled or downsampled decode, before premultiplication; alpha is
/// never changed). Untagged images and images whose profile is equivalent to sRGB are not transformed at all.
/// Colour data that cannot be used (a profile lcms refuses, over 4 MiB, of the wrong colour space for the
/// pixels, an ICC v5 profile, garbage) never fails a decode: it is ignored and the image decodes as untagged.
///
/// - Important: A value type; thread-safe.
public enum ColorManagement: Sendable, Hashable {
    /// Convert every image to sRGB (the default): what browsers show and what the web assumes of untagged
    /// images. Pixels of untagged and sRGB images stay bit-identical to a decode without colour management.
    case sRGB
    /// Leave the pixels as stored and keep the source's ICC profile on the image (`Image.pixelICCProfile`),
    /// so an encoder can write it back. CMYK JPEGs still become RGB, with the profile-less formula.
    case preserve
    /// Convert to the RGB ICC profile given (its bytes). An unusable target profile falls back to `.sRGB`.
    case target(Data)
}
