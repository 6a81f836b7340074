internal import CWebImageJXL
import Foundation
import ImageCodec

/// JPEG XL colour encodings for the colour stage: what the file says (`JXL_COLOR_PROFILE_TARGET_ORIGINAL`) and
/// what the decoded pixels are in (`JXL_COLOR_PROFILE_TARGET_DATA`), as ICC bytes and/or CICP code points.
///
/// For XYB-encoded files (lossy; `uses_original_profile` false) libjxl can render any colour space itself: unless
/// the caller preserves colours, it is asked for sRGB (`JxlDecoderSetPreferredColorProfile`), since its default
/// for a file with an ICC profile is linear sRGB (grey 128 would come out as 54). PQ and HLG enumerated encodings
/// are kept, so that the colour stage tone-maps them with the documented curve. Other files are decoded in their
/// own colour space and converted by the colour stage.
///
/// - Important: Stateless and thread-safe; call from `JXL_DEC_COLOR_ENCODING` of one decoder.
enum JXLColor {
    /// At `JXL_DEC_COLOR_ENCODING`: reads the original encoding, sets the preference, reads the data encoding.
    /// Returns (what the file said, what the pixels are in).
    static func negotiate(_ decoder: OpaquePointer, info: JxlBasicInfo, management: ColorManagement)
        -> (original: ImageColorSpace?, data: ImageColorSpace?) {
        let isGrey = info.num_color_channels == 1
        let original = read(decoder, JXL_COLOR_PROFILE_TARGET_ORIGINAL, isGrey: isGrey)
        if info.uses_original_profile == 0, management != .preserve {
            var encoding = JxlColorEncoding()
            if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS,
               encoding.transfer_function == JXL_TRANSFER_FUNCTION_PQ || encoding.transfer_function == JXL_TRANSFER_FUNCTION_HLG {
                // HDR: keep the enumerated encoding; the colour stage tone-maps it.
            } else {
                var srgb = JxlColorEncoding()
                srgb.color_space = isGrey ? JXL_COLOR_SPACE_GRAY : JXL_COLOR_SPACE_RGB
                srgb.white_point = JXL_WHITE_POINT_D65
                srgb.primaries = JXL_PRIMARIES_SRGB
                srgb.transfer_function = JXL_TRANSFER_FUNCTION_SRGB
                srgb.rendering_intent = JXL_RENDERING_INTENT_RELATIVE
                _ = JxlDecoderSetPreferredColorProfile(decoder, &srgb)  // a refusal leaves libjxl's choice, read below
            }
        }
        return (original, read(decoder, JXL_COLOR_PROFILE_TARGET_DATA, isGrey: isGrey))
    }

    /// One target's encoding: CICP when the enumerated encoding maps onto it (grey uses BT.709 primaries: only its
    /// white and curve matter), else libjxl's ICC profile (embedded, or synthesized from the enumeration).
    static func read(_ decoder: OpaquePointer, _ target: JxlColorProfileTarget, isGrey: Bool) -> ImageColorSpace? {
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, target, &encoding) == JXL_DEC_SUCCESS,
           let cicp = cicp(encoding, isGrey: isGrey) {
            return ImageColorSpace(cicp: cicp)
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, target, &size) == JXL_DEC_SUCCESS, size > 0, size <= 4 << 20 else {
            return nil
        }
        var profile = Data(count: size)
        let status = profile.withUnsafeMutableBytes {
            JxlDecoderGetColorAsICCProfile(decoder, nil, target, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), size)
        }
        return status == JXL_DEC_SUCCESS ? ImageColorSpace(iccProfile: profile) : nil
    }

    /// The CICP code points of an enumerated encoding, or `nil` (custom primaries/white, gamma, DCI transfer, XYB).
    static func cicp(_ e: JxlColorEncoding, isGrey: Bool) -> ImageColorSpace.CICP? {
        let primaries: UInt8
        if isGrey || e.color_space == JXL_COLOR_SPACE_GRAY {
            guard e.white_point == JXL_WHITE_POINT_D65 else { return nil }
            primaries = 1
        } else {
            guard e.color_space == JXL_COLOR_SPACE_RGB else { return nil }
            switch (e.primaries, e.white_point) {
            case (JXL_PRIMARIES_SRGB, JXL_WHITE_POINT_D65): primaries = 1
            case (JXL_PRIMARIES_2100, JXL_WHITE_POINT_D65): primaries = 9
            case (JXL_PRIMARIES_P3, JXL_WHITE_POINT_D65): primaries = 12
            case (JXL_PRIMARIES_P3, JXL_WHITE_POINT_DCI): primaries = 11
            default: return nil
            }
        }
        let transfer: UInt8
        switch e.transfer_function {
        case JXL_TRANSFER_FUNCTION_709: transfer = 1
        case JXL_TRANSFER_FUNCTION_LINEAR: transfer = 8
        case JXL_TRANSFER_FUNCTION_SRGB: transfer = 13
        case JXL_TRANSFER_FUNCTION_PQ: transfer = 16
        case JXL_TRANSFER_FUNCTION_HLG: transfer = 18
        default: return nil
        }
        return ImageColorSpace.CICP(colorPrimaries: primaries, transferCharacteristics: transfer, matrixCoefficients: 0,
                                    isFullRange: true)
    }
}
