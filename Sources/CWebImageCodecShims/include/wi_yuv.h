// RGB → YCbCr 4:4:4 for AVIF output (WebImageAVIF's AVIFEncoder): libavif 0.11's own conversion
// (avifImageRGBToYUV, a float computation per pixel when libyuv has no kernel for the layout, as for 8-bit RGBA to
// 4:4:4) was about 8 % of a cold 400×300 AVIF request's CPU. The same arithmetic in 16.16 fixed point, vectorised.
#ifndef WI_YUV_H
#define WI_YUV_H

#include <stdint.h>

/// Converts `height` rows of `width` RGBA8 pixels (`rgba_stride` bytes apart; the fourth byte is not read) to
/// full-range 8-bit Y, Cb and Cr planes with BT.601's coefficients (Kr 0.299, Kb 0.114), as libavif does for an
/// image whose matrix coefficients are BT.601 or unspecified: Y = round(0.299 R + 0.587 G + 0.114 B),
/// Cb = round(128 + (B − Y) / 1.772), Cr = round(128 + (R − Y) / 1.402), clamped to 0…255. Coefficients rounded to
/// 1/65536: within 1 code of libavif's float result, equal on almost every pixel.
void wi_rgba_to_yuv444_bt601(const uint8_t *rgba, intptr_t rgba_stride, intptr_t width, intptr_t height,
                             uint8_t *y, intptr_t y_stride, uint8_t *cb, intptr_t cb_stride,
                             uint8_t *cr, intptr_t cr_stride);

/// Copies the fourth byte of each RGBA8 pixel (alpha) to an 8-bit plane.
void wi_rgba_alpha_plane(const uint8_t *rgba, intptr_t rgba_stride, intptr_t width, intptr_t height,
                         uint8_t *alpha, intptr_t alpha_stride);

#endif
