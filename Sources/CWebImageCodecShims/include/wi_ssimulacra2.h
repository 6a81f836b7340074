// The per-pixel passes of SSIMULACRA2 (ImageCodec's `SSIMULACRA2`): sRGB to linear, positive XYB, 2×2 halving,
// the metric's Gaussian blur and the sums of its SSIM and edge maps. In C because the Swift versions ran 50–100×
// slower unoptimised (SIMD8 values are generic calls at -Onone) and made the debug test suite's q=auto tests most
// of its time; here they run at -O0 within a few times their -O2 speed, and get an AVX2 clone in release.
// Plain loops with 8-lane partial sums: lane by lane the same arithmetic as the Swift kernels they replaced; the
// lanes are summed pairwise, where Swift's `SIMD8.sum()` went in another order (scores moved by ≤ 4e-5 points).
#ifndef WI_SSIMULACRA2_H
#define WI_SSIMULACRA2_H

#include <stdint.h>

/// Converts `height` rows of `width` RGBA8 pixels (`stride` bytes apart) to linear R, G, B planes (`width` floats
/// a row) through `to_linear` (256 entries), compositing non-opaque pixels on grey 127.5 in the encoded values
/// (`premultiplied` ≠ 0: the colour bytes are already multiplied by alpha, and a colour above its alpha, which
/// valid premultiplied data cannot hold, counts as the alpha); composited values between two codes are
/// interpolated linearly in the table, and never read outside it.
void wi_ss2_linearize(const uint8_t *rgba, intptr_t stride, intptr_t width, intptr_t height, int premultiplied,
                      const float *to_linear, float *r, float *g, float *b);

/// The cube root of `v ≥ 0` to Float precision (an exponent-thirding estimate and two Halley steps); 0 for v ≤ 0.
float wi_ss2_cbrt(float v);

/// The positive XYB planes of `count` linear RGB values: X × 14 + 0.42, Y + 0.01, B − Y + 0.55.
void wi_ss2_positive_xyb(const float *r, const float *g, const float *b, intptr_t count,
                         float *x, float *y, float *b_minus_y);

/// Halves a `width × height` plane in place to `(width + 1) / 2 × (height + 1) / 2`, each pixel the mean of its
/// (up to) 2×2 block.
void wi_ss2_halve(float *plane, intptr_t width, intptr_t height);

/// The metric's 11-tap Gaussian (`taps[0…10]`, symmetric) of `a`, or of `a × b` when `b` is not NULL: zeros beyond
/// the left and right edges, mirrored at the top and bottom. `row` holds `width + 10` floats, `horizontal` and
/// `out` `width × height`.
void wi_ss2_blur(const float *a, const float *b, intptr_t width, intptr_t height, const float *taps,
                 float *row, float *horizontal, float *out);

/// The sums over every pixel of the SSIM distance map `max(0, 1 − (1 − (μ1 − μ2)²)·(2(σ12 − μ1μ2) + c2) /
/// (σ11 − μ1² + σ22 − μ2² + c2))`: `sums[0]` of d, `sums[1]` of d⁴ (Float within a row, Double across rows).
void wi_ss2_ssim_sums(const float *mu1, const float *mu2, const float *sigma11, const float *sigma22,
                      const float *sigma12, intptr_t width, intptr_t height, float c2, double sums[2]);

/// The sums over every pixel of the edge map `d = (1 + |i2 − μ2|) / (1 + |i1 − μ1|) − 1`: `sums[0]` of max(d, 0),
/// `sums[1]` of its 4th power, `sums[2]` of max(−d, 0), `sums[3]` of its 4th power.
void wi_ss2_edge_sums(const float *image1, const float *mu1, const float *image2, const float *mu2,
                      intptr_t width, intptr_t height, double sums[4]);

#endif
