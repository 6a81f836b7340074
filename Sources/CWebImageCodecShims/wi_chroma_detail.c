#include "wi_chroma_detail.h"
#include "wi_multiversion.h"

#include <math.h>

// The Swift version this replaced computed every product and sum separately; no fused multiply-adds here either,
// so both give the same bits (AutomaticQuality's 4:4:4 / 4:2:0 choice must not move).
#pragma STDC FP_CONTRACT OFF

static inline __attribute__((always_inline)) uint8_t wi_chroma_byte(float v) {
    float r = roundf(v);   // half away from zero, as Swift's `rounded()`
    r = r > 0.0f ? r : 0.0f;
    r = r < 255.0f ? r : 255.0f;
    return (uint8_t)r;
}

// One pixel back to RGB from its luma and the four chroma blocks around it (own and neighbour, own and next row).
static inline __attribute__((always_inline)) void wi_chroma_restore_pixel(
    const uint8_t *p, uint8_t *q, int premultiplied, float cbOwnI, float cbOwnN, float cbNextI, float cbNextN,
    float crOwnI, float crOwnN, float crNextI, float crNextN) {
    float ua = cbOwnI * 0.75f + cbOwnN * 0.25f, ub = cbNextI * 0.75f + cbNextN * 0.25f;
    float va = crOwnI * 0.75f + crOwnN * 0.25f, vb = crNextI * 0.75f + crNextN * 0.25f;
    float u = ua * 0.75f + ub * 0.25f, v = va * 0.75f + vb * 0.25f;
    float r = (float)p[0], g = (float)p[1], b = (float)p[2];
    float luma = 0.299f * r + 0.587f * g + 0.114f * b;
    float rr = luma + 1.402f * v, gg = luma - 0.344136f * u - 0.714136f * v, bb = luma + 1.772f * u;
    if (premultiplied) {
        // Premultiplied pixels stay within their alpha.
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

// The AVX2 clone rounds inline (SSE4.1's `roundss`); the baseline calls libm's `roundf` three times a pixel.
WI_MULTIVERSION
void wi_chroma_420_roundtrip(const uint8_t *src, intptr_t src_stride, uint8_t *dst, intptr_t dst_stride,
                             intptr_t width, intptr_t height, int premultiplied, float *cb, float *cr) {
    const intptr_t cw = (width + 1) / 2, ch = (height + 1) / 2;
    for (intptr_t i = 0; i < cw * ch; i++) { cb[i] = 0.0f; cr[i] = 0.0f; }
    // Block sums in raster order (each block's four values added in the order the Swift loop added them).
    for (intptr_t y = 0; y < height; y++) {
        const uint8_t *p = src + y * src_stride;
        float *restrict cbRow = cb + (y / 2) * cw, *restrict crRow = cr + (y / 2) * cw;
        for (intptr_t x = 0; x < width; x++, p += 4) {
            float r = (float)p[0], g = (float)p[1], b = (float)p[2];
            cbRow[x / 2] += -0.168736f * r - 0.331264f * g + 0.5f * b;
            crRow[x / 2] += 0.5f * r - 0.418688f * g - 0.081312f * b;
        }
    }
    // Means: a block is 2 × 2 pixels except in the last column of an odd width and the last row of an odd height.
    for (intptr_t j = 0; j < ch; j++) {
        float rows = (j == ch - 1 && (height & 1)) ? 1.0f : 2.0f;
        for (intptr_t i = 0; i < cw; i++) {
            float columns = (i == cw - 1 && (width & 1)) ? 1.0f : 2.0f;
            float count = rows * columns;
            cb[j * cw + i] /= count;
            cr[j * cw + i] /= count;
        }
    }
    // Chroma sample (i, j) sits at pixel centre (2i + 0.5, 2j + 0.5): each pixel takes 3/4 of its own block and
    // 1/4 of the neighbouring one on each axis (edges repeat), horizontally first: an even pixel's neighbour is
    // block i − 1, an odd one's block i + 1.
    for (intptr_t y = 0; y < height; y++) {
        const intptr_t j = y / 2;
        intptr_t nj = (y % 2 == 0) ? j - 1 : j + 1;
        nj = nj < 0 ? 0 : (nj > ch - 1 ? ch - 1 : nj);
        const float *cbOwn = cb + j * cw, *cbNext = cb + nj * cw;
        const float *crOwn = cr + j * cw, *crNext = cr + nj * cw;
        const uint8_t *row = src + y * src_stride;
        uint8_t *out = dst + y * dst_stride;
        for (intptr_t x = 0; x < width; x++) {
            const intptr_t i = x >> 1;
            const intptr_t ni = (x & 1) ? (i + 1 < cw ? i + 1 : cw - 1) : (i > 0 ? i - 1 : 0);
            wi_chroma_restore_pixel(row + 4 * x, out + 4 * x, premultiplied,
                                    cbOwn[i], cbOwn[ni], cbNext[i], cbNext[ni],
                                    crOwn[i], crOwn[ni], crNext[i], crNext[ni]);
        }
    }
}
