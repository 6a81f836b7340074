// The matrix-shaper fast path (see wi_color.h). Per pixel: three 16-byte loads from the input tables (each entry
// is the code's linear value already multiplied by one matrix column, so the matrix is three vector adds), a
// rounding shift, a clamp, three byte loads from the output tables. The tables of an sRGB target share one
// output table, so the working set (12 KB + 16 KB) stays in the first-level cache.
#include "wi_color.h"
#include <stdlib.h>
#include <string.h>

#include "wi_multiversion.h"

typedef int32_t wi_v4i __attribute__((vector_size(16)));

struct wi_matrix_shaper {
    /// [channel][code]: (m[0][c], m[1][c], m[2][c], 0) × the code's linear value, all 1.14.
    wi_v4i columns[3][256];
    /// The offset plus 0x2000 (the rounding of lcms's `>> 14`).
    wi_v4i bias;
    /// Per output channel; equal tables point at the same storage.
    const uint8_t *output[3];
    uint8_t storage[3][WI_MATRIX_SHAPER_OUTPUT_ENTRIES];
};

wi_matrix_shaper *wi_matrix_shaper_create(const int32_t *input, const int32_t *matrix, const int32_t *offset,
                                          const uint8_t *output) {
    // Every sum is formed in 32 bits, as lcms does: refuse tables where the largest possible sum does not fit.
    for (int i = 0; i < 3; i++) {
        int64_t bound = (int64_t)llabs((long long)offset[i]) + 0x2000;
        for (int c = 0; c < 3; c++) {
            int64_t largest = 0;
            for (int v = 0; v < 256; v++) {
                int64_t product = llabs((long long)matrix[i * 3 + c] * (long long)input[c * 256 + v]);
                if (product > largest) largest = product;
            }
            bound += largest;
        }
        if (bound >= INT32_MAX) return NULL;
    }
    wi_matrix_shaper *t = aligned_alloc(64, (sizeof(wi_matrix_shaper) + 63) / 64 * 64);
    if (!t) return NULL;
    for (int c = 0; c < 3; c++) {
        for (int v = 0; v < 256; v++) {
            int32_t linear = input[c * 256 + v];
            wi_v4i column = {matrix[c] * linear, matrix[3 + c] * linear, matrix[6 + c] * linear, 0};
            t->columns[c][v] = column;
        }
    }
    wi_v4i bias = {offset[0] + 0x2000, offset[1] + 0x2000, offset[2] + 0x2000, 0};
    t->bias = bias;
    for (int c = 0; c < 3; c++) {
        const uint8_t *table = output + (size_t)c * WI_MATRIX_SHAPER_OUTPUT_ENTRIES;
        t->output[c] = NULL;
        for (int k = 0; k < c; k++) {
            if (memcmp(t->storage[k], table, WI_MATRIX_SHAPER_OUTPUT_ENTRIES) == 0) {
                t->output[c] = t->output[k];
                break;
            }
        }
        memcpy(t->storage[c], table, WI_MATRIX_SHAPER_OUTPUT_ENTRIES);
        if (!t->output[c]) t->output[c] = t->storage[c];
    }
    return t;
}

void wi_matrix_shaper_free(wi_matrix_shaper *transform) { free(transform); }

WI_MULTIVERSION
void wi_matrix_shaper_apply(const wi_matrix_shaper *t, uint8_t *pixels, intptr_t width, intptr_t height,
                            intptr_t stride) {
    const uint8_t *out0 = t->output[0], *out1 = t->output[1], *out2 = t->output[2];
    const wi_v4i zero = {0, 0, 0, 0};
    const wi_v4i top = {16384, 16384, 16384, 16384};
    for (intptr_t y = 0; y < height; y++) {
        uint8_t *p = pixels + y * stride;
        for (intptr_t x = 0; x < width; x++, p += 4) {
            wi_v4i sum = t->bias + t->columns[0][p[0]] + t->columns[1][p[1]] + t->columns[2][p[2]];
            wi_v4i l = sum >> 14;
            l &= (wi_v4i)(l > zero);
            wi_v4i over = (wi_v4i)(l > top);
            l = (l & ~over) | (top & over);
            p[0] = out0[l[0]];
            p[1] = out1[l[1]];
            p[2] = out2[l[2]];
        }
    }
}
