#include "wi_chroma_detail.h"
#include "wi_multiversion.h"

#include <math.h>
#include <string.h>

// The Swift version this replaced computed every product and sum separately; no fused multiply-adds here either,
// so both give the same bits (AutomaticQuality's 4:4:4 / 4:2:0 choice must not move).
#pragma STDC FP_CONTRACT OFF

// Inlined at every optimisation level (a debug build would call it once per pixel).
#define WI_CD_INLINE static inline __attribute__((always_inline))

// Eight floats, eight or thirty-two bytes as one value (clang's vector extension), loaded and stored at any
// alignment. Lane by lane the same IEEE operations as the scalar tail.

typedef float wi_cd_f8 __attribute__((vector_size(32)));
typedef float wi_cd_f8u __attribute__((vector_size(32), aligned(4)));
typedef uint8_t wi_cd_b32 __attribute__((vector_size(32), aligned(1)));
typedef uint8_t wi_cd_b8 __attribute__((vector_size(8)));

WI_CD_INLINE uint8_t wi_chroma_byte(float v) {
    float r = roundf(v);   // half away from zero, as Swift's `rounded()`
    r = r > 0.0f ? r : 0.0f;
    r = r < 255.0f ? r : 255.0f;
    return (uint8_t)r;
}

intptr_t wi_chroma_420_scratch_count(intptr_t width, intptr_t height) {
    const intptr_t cw = (width + 1) / 2, ch = (height + 1) / 2;
    return 2 * cw * ch + 2 * ch * width;
}

// One pixel back to RGB from its luma and its chroma (the blocks around it already blended): the scalar tail.
WI_CD_INLINE void wi_chroma_restore_pixel(const uint8_t *p, uint8_t *q, int premultiplied, float u, float v) {
    float r = (float)p[0], g = (float)p[1], b = (float)p[2];
    float luma = 0.299f * r + 0.587f * g + 0.114f * b;
    float rr = luma + 1.402f * v, gg = luma - 0.344136f * u - 0.714136f * v, bb = luma + 1.772f * u;
    if (premultiplied) {
        float a = (float)p[3];
        rr = a < rr ? a : rr;
        gg = a < gg ? a : gg;
        bb = a < bb ? a : bb;
    }
    q[0] = wi_chroma_byte(rr);
    q[1] = wi_chroma_byte(gg);
    q[2] = wi_chroma_byte(bb);
    q[3] = p[3];
}

// Eight rounded, clamped bytes (a macro, not a function: a 32-byte vector argument changes the calling convention
// between the baseline and AVX2 clones, which clang refuses).
// (min and max differ from the scalar selects only in the sign of a zero, which the conversion to a byte drops;
// no NaN can reach them.)
#define WI_CD_BYTES8(x) ({ wi_cd_f8 wi_r_ = __builtin_elementwise_round(x); \
    wi_r_ = __builtin_elementwise_max(wi_r_, (wi_cd_f8){0}); \
    wi_r_ = __builtin_elementwise_min(wi_r_, (wi_cd_f8){0} + 255.0f); \
    __builtin_convertvector(wi_r_, wi_cd_b8); })

// Three passes: block sums and means (scalar, in the Swift loop's order); each chroma row blended horizontally once;
// then eight pixels a step, blended vertically and converted back (the AVX2 clone rounds with `vroundps`).
WI_MULTIVERSION
void wi_chroma_420_roundtrip(const uint8_t *src, intptr_t src_stride, uint8_t *dst, intptr_t dst_stride,
                             intptr_t width, intptr_t height, int premultiplied, float *scratch) {
    const intptr_t cw = (width + 1) / 2, ch = (height + 1) / 2;
    float *cb = scratch, *cr = scratch + cw * ch;
    float *hcb = cr + cw * ch, *hcr = hcb + ch * width;
    memset(cb, 0, sizeof(float) * (size_t)(2 * cw * ch));
    for (intptr_t y = 0; y < height; y++) {
        const uint8_t *p = src + y * src_stride;
        float *restrict cbRow = cb + (y / 2) * cw, *restrict crRow = cr + (y / 2) * cw;
        for (intptr_t x = 0; x < width; x++, p += 4) {
            float r = (float)p[0], g = (float)p[1], b = (float)p[2];
            cbRow[x / 2] += -0.168736f * r - 0.331264f * g + 0.5f * b;
            crRow[x / 2] += 0.5f * r - 0.418688f * g - 0.081312f * b;
        }
    }
    for (intptr_t j = 0; j < ch; j++) {
        float rows = (j == ch - 1 && (height & 1)) ? 1.0f : 2.0f;
        for (intptr_t i = 0; i < cw; i++) {
            float columns = (i == cw - 1 && (width & 1)) ? 1.0f : 2.0f;
            float count = rows * columns;
            cb[j * cw + i] /= count;
            cr[j * cw + i] /= count;
        }
    }
    // Horizontal blends, once per chroma row: pixel x takes 3/4 of its block i = x / 2 and 1/4 of block i − 1
    // (x even) or i + 1 (x odd), edges repeating.
    for (intptr_t j = 0; j < ch; j++) {
        const float *pb = cb + j * cw, *pr = cr + j * cw;
        float *ob = hcb + j * width, *or_ = hcr + j * width;
        for (intptr_t i = 0; i < cw; i++) {
            intptr_t left = i > 0 ? i - 1 : 0, right = i + 1 < cw ? i + 1 : cw - 1;
            ob[2 * i] = pb[i] * 0.75f + pb[left] * 0.25f;
            or_[2 * i] = pr[i] * 0.75f + pr[left] * 0.25f;
            if (2 * i + 1 < width) {
                ob[2 * i + 1] = pb[i] * 0.75f + pb[right] * 0.25f;
                or_[2 * i + 1] = pr[i] * 0.75f + pr[right] * 0.25f;
            }
        }
    }
    // Vertically: 3/4 of the pixel's own chroma row, 1/4 of the one above (y even) or below (y odd).
    for (intptr_t y = 0; y < height; y++) {
        const intptr_t j = y / 2;
        intptr_t nj = (y % 2 == 0) ? j - 1 : j + 1;
        nj = nj < 0 ? 0 : (nj > ch - 1 ? ch - 1 : nj);
        const float *bOwn = hcb + j * width, *bNext = hcb + nj * width;
        const float *rOwn = hcr + j * width, *rNext = hcr + nj * width;
        const uint8_t *row = src + y * src_stride;
        uint8_t *out = dst + y * dst_stride;
        intptr_t x = 0;
        for (; x + 8 <= width; x += 8) {
            wi_cd_f8 u = *(const wi_cd_f8u *)(bOwn + x) * 0.75f + *(const wi_cd_f8u *)(bNext + x) * 0.25f;
            wi_cd_f8 v = *(const wi_cd_f8u *)(rOwn + x) * 0.75f + *(const wi_cd_f8u *)(rNext + x) * 0.25f;
            wi_cd_b32 px = *(const wi_cd_b32 *)(row + 4 * x);
            wi_cd_f8 r = __builtin_convertvector(__builtin_shufflevector(px, px, 0, 4, 8, 12, 16, 20, 24, 28), wi_cd_f8);
            wi_cd_f8 g = __builtin_convertvector(__builtin_shufflevector(px, px, 1, 5, 9, 13, 17, 21, 25, 29), wi_cd_f8);
            wi_cd_f8 b = __builtin_convertvector(__builtin_shufflevector(px, px, 2, 6, 10, 14, 18, 22, 26, 30), wi_cd_f8);
            wi_cd_b8 a8 = __builtin_shufflevector(px, px, 3, 7, 11, 15, 19, 23, 27, 31);
            wi_cd_f8 luma = 0.299f * r + 0.587f * g + 0.114f * b;
            wi_cd_f8 rr = luma + 1.402f * v, gg = luma - 0.344136f * u - 0.714136f * v, bb = luma + 1.772f * u;
            if (premultiplied) {
                wi_cd_f8 a = __builtin_convertvector(a8, wi_cd_f8);
                rr = __builtin_elementwise_min(rr, a);
                gg = __builtin_elementwise_min(gg, a);
                bb = __builtin_elementwise_min(bb, a);
            }
            wi_cd_b8 r8 = WI_CD_BYTES8(rr), g8 = WI_CD_BYTES8(gg), b8 = WI_CD_BYTES8(bb);
            typedef uint8_t wi_cd_b16 __attribute__((vector_size(16)));
            wi_cd_b16 rg = __builtin_shufflevector(r8, g8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            wi_cd_b16 ba = __builtin_shufflevector(b8, a8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            *(wi_cd_b32 *)(out + 4 * x) = __builtin_shufflevector(rg, ba,
                0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27,
                4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
        }
        for (; x < width; x++) {
            float u = bOwn[x] * 0.75f + bNext[x] * 0.25f, v = rOwn[x] * 0.75f + rNext[x] * 0.25f;
            wi_chroma_restore_pixel(row + 4 * x, out + 4 * x, premultiplied, u, v);
        }
    }
}
