// The colour stage's fast path for matrix-shaper RGB profiles (ImageCodec's MatrixShaperTransform): per-channel
// input tables, one 3×3 matrix and per-channel output tables, in the 1.14 fixed-point arithmetic of Little CMS's
// own 8-bit matrix-shaper optimisation (cmsopt.c, MatShaperEval16), so its pixels are the ones lcms would give
// for the same tables. The tables are built in Swift from the profiles through Little CMS.
#ifndef WI_COLOR_H
#define WI_COLOR_H

#include <stddef.h>
#include <stdint.h>

/// Entries of an output table: linear light quantised to 1.14 fixed point, 0 … 16384 inclusive.
#define WI_MATRIX_SHAPER_OUTPUT_ENTRIES 16385

/// An opaque, immutable transform: safe to apply from many threads at once.
typedef struct wi_matrix_shaper wi_matrix_shaper;

/// Makes a transform from `input` (per channel, the linear value of each 8-bit code in 1.14 fixed point),
/// `matrix` (row-major, 1.14 fixed point: output channel `i` = sum over `j` of `matrix[i*3+j] * input_j`),
/// `offset` (1.14, added to each output channel) and `output` (per channel, the 8-bit code of each quantised
/// linear value, `WI_MATRIX_SHAPER_OUTPUT_ENTRIES` entries each). Copies everything. Returns NULL when the sums
/// could overflow 32 bits (the caller then keeps Little CMS) or allocation fails. Free with
/// `wi_matrix_shaper_free`.
wi_matrix_shaper *wi_matrix_shaper_create(const int32_t *input /* [3][256] */, const int32_t *matrix /* [9] */,
                                          const int32_t *offset /* [3] */, const uint8_t *output /* [3][16385] */);

/// Frees a transform made by `wi_matrix_shaper_create` (NULL is fine).
void wi_matrix_shaper_free(wi_matrix_shaper *transform);

/// Converts `height` rows of `width` RGBA8 pixels in place, `stride` bytes apart: R, G and B go through the
/// transform; the fourth byte (alpha, or padding) is never read or written.
void wi_matrix_shaper_apply(const wi_matrix_shaper *transform, uint8_t *pixels, intptr_t width, intptr_t height,
                            intptr_t stride);

#endif
