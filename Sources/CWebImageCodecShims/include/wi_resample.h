// The two inner loops of ImageCodec's RowResampler, in C so they can be compiled for AVX2 as well as for the
// baseline x86-64 the Swift code targets (function multiversioning picks the clone at load time). Same integer
// arithmetic as the Swift loops they replace: the pixels are bit-identical whichever clone runs.
#ifndef WI_RESAMPLE_H
#define WI_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/// `accumulators[i] += source[i] * weight` for `count` elements, wrapping on overflow (as Swift's `&+`, `&*`).
void wi_resample_accumulate(int32_t *accumulators, const uint8_t *source, intptr_t count, int32_t weight);

/// Filters one row of premultiplied RGBA accumulators horizontally into `width` output pixels: pixel `x` sums
/// `accumulators[(start[x] + k) * 4 + c] * weights[x * stride + k]` for `k < length[x]` in 64 bits, rounds and
/// shifts by `shift`, clamps alpha to 0…255 and colour to 0…alpha.
void wi_resample_emit_row(const int32_t *accumulators, const intptr_t *start, const intptr_t *length,
                          const int32_t *weights, intptr_t stride, intptr_t width, uint8_t *out, int shift);

#endif
