// BoxPrefilter's loops (see wi_box_prefilter.h). Pixels are RGBA, so a pixel's four channels are one vector of
// four sums and two blocks are one 8-lane vector. On x86-64 each function has an AVX2 clone (wi_multiversion.h).
#include "wi_box_prefilter.h"
#include <string.h>

#include "wi_multiversion.h"

typedef uint8_t wi_box_v4b __attribute__((vector_size(4)));
typedef uint16_t wi_box_v4w __attribute__((vector_size(8)));
typedef uint32_t wi_box_v4u __attribute__((vector_size(16)));
typedef uint8_t wi_box_v8b __attribute__((vector_size(8)));
typedef uint16_t wi_box_v8w __attribute__((vector_size(16)));
typedef uint32_t wi_box_v8u __attribute__((vector_size(32)));
typedef uint64_t wi_box_v8q __attribute__((vector_size(64)));
typedef uint8_t wi_box_v16b __attribute__((vector_size(16)));
typedef uint16_t wi_box_v16w __attribute__((vector_size(32)));

static uint8_t wi_box_divide_one(uint32_t sum, wi_box_divisor d) {
    return (uint8_t)(((uint64_t)sum * d.reciprocal + ((uint64_t)1 << 31)) >> 32);
}

wi_box_divisor wi_box_make_divisor(intptr_t count) {
    uint64_t n = (uint64_t)count;
    wi_box_divisor d = {((uint64_t)1 << 32) + n / 2, 0, 0, 0};
    d.reciprocal /= n;
    // A 32-bit multiplier carries about 24 bits of 1/count, enough to round every sum of up to about 180 pixels as
    // the 64-bit reciprocal does (the error must stay under 1/(2·count) for sums up to 255·count); larger blocks keep
    // the 64-bit path. Each candidate is checked against every possible sum.
    if (n > 180) return d;
    uint64_t largest = 255 * n;
    for (uint32_t shift = 24; shift >= 1; shift--) {
        uint64_t scaled = d.reciprocal << shift;
        uint64_t candidates[2] = {(scaled + 0xFFFFFFFFu) >> 32, scaled >> 32};
        for (int c = 0; c < 2; c++) {
            uint64_t m = candidates[c];
            uint64_t bias = (uint64_t)1 << (shift - 1);
            if (m == 0 || largest * m + bias > UINT32_MAX) continue;
            uint64_t s = 0;
            while (s <= largest && ((s * m + bias) >> shift) == wi_box_divide_one((uint32_t)s, d)) s++;
            if (s > largest) {
                d.multiplier = (uint32_t)m;
                d.bias = (uint32_t)bias;
                d.shift = shift;
                return d;
            }
        }
    }
    return d;
}

WI_MULTIVERSION
void wi_box_add_row(uint16_t *restrict columns, const uint8_t *restrict source, intptr_t count, int is_first) {
    if (is_first) {
        for (intptr_t i = 0; i < count; i++) columns[i] = source[i];
    } else {
        for (intptr_t i = 0; i < count; i++) columns[i] = (uint16_t)(columns[i] + source[i]);
    }
}

/// Two pixels, `a` and `b`, of `columns` (if any) plus `row`, as one vector of eight sums added to `*total`.
/// (Vectors pass through pointers: a 32-byte vector argument would change the ABI of the baseline clone.)
static inline __attribute__((always_inline)) void wi_box_add_pair(wi_box_v8u *total, const uint16_t *columns,
                                                                  const uint8_t *row, intptr_t a, intptr_t b,
                                                                  int has_columns) {
    wi_box_v4b ra, rb;
    memcpy(&ra, row + a * 4, sizeof ra);
    memcpy(&rb, row + b * 4, sizeof rb);
    *total += __builtin_convertvector(__builtin_shufflevector(ra, rb, 0, 1, 2, 3, 4, 5, 6, 7), wi_box_v8u);
    if (has_columns) {
        wi_box_v4w ca, cb;
        memcpy(&ca, columns + a * 4, sizeof ca);
        memcpy(&cb, columns + b * 4, sizeof cb);
        *total += __builtin_convertvector(__builtin_shufflevector(ca, cb, 0, 1, 2, 3, 4, 5, 6, 7), wi_box_v8u);
    }
}

/// Divides eight sums by `d` and stores the first `bytes` (4 or 8) results.
static inline __attribute__((always_inline)) void wi_box_store(uint8_t *out, const wi_box_v8u *total, wi_box_divisor d,
                                                               int is_32_bit, size_t bytes) {
    wi_box_v8b values;
    if (is_32_bit) {
        values = __builtin_convertvector((*total * d.multiplier + d.bias) >> d.shift, wi_box_v8b);
    } else {
        // Zero-extended 32-bit operands: one vpmuludq for four products in the AVX2 clone. A reciprocal of 2^32
        // (blocks of one pixel) does not fit; it divides by 1.
        uint32_t r = d.reciprocal > UINT32_MAX ? 0 : (uint32_t)d.reciprocal;
        wi_box_v8q product = __builtin_convertvector(*total, wi_box_v8q)
                             * __builtin_convertvector((wi_box_v8u){0} + r, wi_box_v8q);
        values = d.reciprocal > UINT32_MAX ? __builtin_convertvector(*total, wi_box_v8b)
                 : __builtin_convertvector((product + ((uint64_t)1 << 31)) >> 32, wi_box_v8b);
    }
    memcpy(out, &values, bytes);
}

/// `wi_box_average` with its two choices as constants, so each combination compiles to its own loops.
static inline __attribute__((always_inline)) void wi_box_average_body(uint8_t *restrict out,
                                                                      const uint16_t *restrict columns,
                                                                      const uint8_t *restrict row, intptr_t pixels,
                                                                      intptr_t factor, wi_box_divisor full,
                                                                      wi_box_divisor last, int has_columns,
                                                                      int is_32_bit) {
    intptr_t blocks = (pixels + factor - 1) / factor;
    intptr_t b = 0;
    // Two whole blocks a step (the last block, maybe narrower and with its own divisor, is left to the end).
    if (factor == 2) {
        // 2 × 2 pixels: one 16-byte load of the row and one 32-byte load of the columns, pairs added by shuffles.
        for (; b + 2 < blocks; b += 2) {
            wi_box_v16b r;
            memcpy(&r, row + b * 8, sizeof r);
            wi_box_v8u total = __builtin_convertvector(__builtin_shufflevector(r, r, 0, 1, 2, 3, 8, 9, 10, 11), wi_box_v8u)
                               + __builtin_convertvector(__builtin_shufflevector(r, r, 4, 5, 6, 7, 12, 13, 14, 15), wi_box_v8u);
            if (has_columns) {
                wi_box_v16w c;
                memcpy(&c, columns + b * 8, sizeof c);
                total += __builtin_convertvector(__builtin_shufflevector(c, c, 0, 1, 2, 3, 8, 9, 10, 11), wi_box_v8u)
                         + __builtin_convertvector(__builtin_shufflevector(c, c, 4, 5, 6, 7, 12, 13, 14, 15), wi_box_v8u);
            }
            wi_box_store(out + b * 4, &total, full, is_32_bit, 8);
        }
    } else {
        for (; b + 2 < blocks; b += 2) {
            wi_box_v8u total = {0};
            for (intptr_t k = 0; k < factor; k++) {
                wi_box_add_pair(&total, columns, row, b * factor + k, (b + 1) * factor + k, has_columns);
            }
            wi_box_store(out + b * 4, &total, full, is_32_bit, 8);
        }
    }
    for (; b < blocks; b++) {
        intptr_t first = b * factor;
        intptr_t end = first + factor < pixels ? first + factor : pixels;
        wi_box_v8u total = {0};
        for (intptr_t i = first; i < end; i++) wi_box_add_pair(&total, columns, row, i, i, has_columns);
        wi_box_divisor d = b == blocks - 1 ? last : full;
        wi_box_store(out + b * 4, &total, d, d.multiplier != 0, 4);
    }
}

WI_MULTIVERSION
void wi_box_average(uint8_t *restrict out, const uint16_t *restrict columns, const uint8_t *restrict row,
                    intptr_t pixels, intptr_t factor, wi_box_divisor full, wi_box_divisor last) {
    if (columns && full.multiplier) {
        wi_box_average_body(out, columns, row, pixels, factor, full, last, 1, 1);
    } else if (columns) {
        wi_box_average_body(out, columns, row, pixels, factor, full, last, 1, 0);
    } else if (full.multiplier) {
        wi_box_average_body(out, NULL, row, pixels, factor, full, last, 0, 1);
    } else {
        wi_box_average_body(out, NULL, row, pixels, factor, full, last, 0, 0);
    }
}

WI_MULTIVERSION
void wi_box_reduce_columns(uint32_t *restrict sums, const uint16_t *restrict columns, intptr_t pixels,
                           intptr_t factor) {
    intptr_t blocks = (pixels + factor - 1) / factor;
    for (intptr_t b = 0; b < blocks; b++) {
        intptr_t first = b * factor;
        intptr_t end = first + factor < pixels ? first + factor : pixels;
        wi_box_v4u total;
        memcpy(&total, sums + b * 4, sizeof total);
        for (intptr_t i = first; i < end; i++) {
            wi_box_v4w column;
            memcpy(&column, columns + i * 4, sizeof column);
            total += __builtin_convertvector(column, wi_box_v4u);
        }
        memcpy(sums + b * 4, &total, sizeof total);
    }
}

void wi_box_divide(uint8_t *out, uint32_t *sums, intptr_t count, wi_box_divisor divisor) {
    for (intptr_t i = 0; i < count; i++) out[i] = wi_box_divide_one(sums[i], divisor);
    memset(sums, 0, (size_t)count * sizeof *sums);
}
