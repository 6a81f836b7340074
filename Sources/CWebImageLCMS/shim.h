// Little CMS 2 (the system liblcms2; never its GPL fast-float plug-in). lcms's pixel-format and flag macros are
// function-like, which Swift cannot import: the formats the colour stage uses are spelled out here as constants.
#include <lcms2.h>

/// RGB + one extra (alpha) byte: the layout of a `PixelBuffer` row. The extra byte is never written.
static const cmsUInt32Number WI_LCMS_TYPE_RGBA_8 = TYPE_RGBA_8;
/// Grey read from the first byte of each 4-byte RGBA pixel (the other three skipped): a grey image libjpeg or
/// libpng already expanded to RGBA.
static const cmsUInt32Number WI_LCMS_TYPE_GRAY_IN_RGBA_8 = COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(3);
/// RGBA with 16 bits per channel in the machine's byte order (libavif's deep output).
static const cmsUInt32Number WI_LCMS_TYPE_RGBA_16 = TYPE_RGBA_16;
/// Copies (and rescales) the alpha channel from input to output: for the 16-bit → 8-bit transforms.
static const cmsUInt32Number WI_LCMS_FLAG_COPY_ALPHA = cmsFLAGS_COPY_ALPHA;
/// CMYK, 8 bits per ink (0 = no ink).
static const cmsUInt32Number WI_LCMS_TYPE_CMYK_8 = TYPE_CMYK_8;
/// CMYK stored inverted (255 = no ink), as Adobe writes it in JPEG (APP14).
static const cmsUInt32Number WI_LCMS_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;
/// Relative colorimetric intent.
static const cmsUInt32Number WI_LCMS_INTENT_RELATIVE = INTENT_RELATIVE_COLORIMETRIC;
/// Black-point compensation + no 1-pixel cache (a transform without it is safe to share between threads).
static const cmsUInt32Number WI_LCMS_FLAGS = cmsFLAGS_BLACKPOINTCOMPENSATION | cmsFLAGS_NOCACHE;
