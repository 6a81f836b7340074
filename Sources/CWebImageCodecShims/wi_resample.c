// RowResampler's inner loops (see wi_resample.h). On x86-64 each function has an AVX2 clone and a baseline
// one, chosen once by the dynamic loader (ifunc); elsewhere it is plain C. The horizontal pass keeps one pixel's
// four channels in a vector of four 64-bit sums, so the AVX2 clone does a tap in one multiply-add.
#include "wi_resample.h"
#include <string.h>

#include "wi_multiversion.h"

typedef int64_t wi_v4q __attribute__((vector_size(32)));
typedef int32_t wi_v4d __attribute__((vector_size(16)));
typedef uint64_t wi_v4uq __attribute__((vector_size(32)));
typedef uint8_t wi_v4b __attribute__((vector_size(4)));

WI_MULTIVERSION
void wi_resample_accumulate(int32_t *restrict accumulators, const uint8_t *restrict source, intptr_t count,
                            int32_t weight) {
    // Unsigned arithmetic wraps like Swift's &+ and &* (signed overflow would be undefined in C).
    uint32_t w = (uint32_t)weight;
    for (intptr_t i = 0; i < count; i++) {
        accumulators[i] = (int32_t)((uint32_t)accumulators[i] + (uint32_t)source[i] * w);
    }
}

WI_MULTIVERSION
void wi_resample_emit_row(const int32_t *restrict accumulators, const intptr_t *start, const intptr_t *length,
                          const int32_t *weights, intptr_t stride, intptr_t width, uint8_t *restrict out,
                          int shift) {
    const int64_t half = (int64_t)1 << (shift - 1);
    for (intptr_t x = 0; x < width; x++) {
        const int32_t *w = weights + x * stride;
        const int32_t *p = accumulators + start[x] * 4;
        wi_v4q sum = {0, 0, 0, 0};
        for (intptr_t k = 0; k < length[x]; k++) {
            wi_v4d pixel;
            memcpy(&pixel, p + k * 4, sizeof pixel);
            sum += __builtin_convertvector(pixel, wi_v4q) * (int64_t)w[k];
        }
        // The same as clamping each channel's (sum + half) >> shift to [0, alpha] and alpha to [0, 255], in
        // vector registers (the scalar form took about half of this function's time): a negative sum is 0
        // before the shift, so a logical shift equals the arithmetic one, and the shifted values are small and
        // non-negative, so signed comparisons order them.
        wi_v4q rounded = sum + half;
        rounded &= (wi_v4q)(rounded > 0);
        wi_v4q value = (wi_v4q)((wi_v4uq)rounded >> (uint64_t)shift);
        int64_t alpha = value[3] > 255 ? 255 : value[3];
        wi_v4q bound = {alpha, alpha, alpha, alpha};
        wi_v4q over = (wi_v4q)(value > bound);
        value = (value & ~over) | (bound & over);
        wi_v4b bytes = __builtin_convertvector(value, wi_v4b);
        memcpy(out + x * 4, &bytes, sizeof bytes);
    }
}
