#include "wi_yuv.h"
#include "wi_multiversion.h"

// 16.16 fixed point: each row of coefficients sums to exactly 65536 (Y) or 0 (Cb, Cr), so white stays 255 and
// greys keep Cb = Cr = 128. 0.587 rounds to 38470 so that Y's row sums to 65536.
enum {
    WI_YR = 19595, WI_YG = 38470, WI_YB = 7471,
    WI_UR = -11059, WI_UG = -21709, WI_UB = 32768,
    WI_VR = 32768, WI_VG = -27439, WI_VB = -5329,
    WI_HALF = 1 << 15, WI_BIAS = 128 << 16,
};

static inline uint8_t wi_clamp_code(int32_t value) {
    return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
}

WI_MULTIVERSION
void wi_rgba_to_yuv444_bt601(const uint8_t *rgba, intptr_t rgba_stride, intptr_t width, intptr_t height,
                             uint8_t *y, intptr_t y_stride, uint8_t *cb, intptr_t cb_stride,
                             uint8_t *cr, intptr_t cr_stride) {
    for (intptr_t row = 0; row < height; row++) {
        const uint8_t *pixel = rgba + row * rgba_stride;
        uint8_t *restrict out_y = y + row * y_stride;
        uint8_t *restrict out_cb = cb + row * cb_stride;
        uint8_t *restrict out_cr = cr + row * cr_stride;
        for (intptr_t x = 0; x < width; x++) {
            int32_t r = pixel[4 * x], g = pixel[4 * x + 1], b = pixel[4 * x + 2];
            // Arithmetic shifts of non-negative sums (Cb and Cr carry the +128 bias): rounding half up, as
            // libavif's floorf(v + 0.5).
            out_y[x] = wi_clamp_code((WI_YR * r + WI_YG * g + WI_YB * b + WI_HALF) >> 16);
            out_cb[x] = wi_clamp_code((WI_UR * r + WI_UG * g + WI_UB * b + WI_BIAS + WI_HALF) >> 16);
            out_cr[x] = wi_clamp_code((WI_VR * r + WI_VG * g + WI_VB * b + WI_BIAS + WI_HALF) >> 16);
        }
    }
}

WI_MULTIVERSION
void wi_rgba_alpha_plane(const uint8_t *rgba, intptr_t rgba_stride, intptr_t width, intptr_t height,
                         uint8_t *alpha, intptr_t alpha_stride) {
    for (intptr_t row = 0; row < height; row++) {
        const uint8_t *pixel = rgba + row * rgba_stride;
        uint8_t *restrict out = alpha + row * alpha_stride;
        for (intptr_t x = 0; x < width; x++) out[x] = pixel[4 * x + 3];
    }
}
