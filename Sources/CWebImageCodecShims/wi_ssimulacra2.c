#include "wi_ssimulacra2.h"
#include "wi_multiversion.h"

#include <math.h>
#include <string.h>

enum { WI_SS2_LANES = 8, WI_SS2_RADIUS = 5 };

// Inlined at every optimisation level: a debug build (-O0) would otherwise call them once per pixel.
#define WI_SS2_INLINE static inline __attribute__((always_inline))

// Eight floats as one value (clang's vector extension: SSE pairs on baseline x86-64, one AVX register in the AVX2
// clone, NEON elsewhere), loaded and stored at any alignment. Lane by lane the same IEEE operations as scalar code.
typedef float wi_ss2_v8 __attribute__((vector_size(32)));
typedef float wi_ss2_v8_unaligned __attribute__((vector_size(32), aligned(4)));
#define WI_SS2_LOAD(p) (*(const wi_ss2_v8_unaligned *)(p))
#define WI_SS2_STORE(p, v) (*(wi_ss2_v8_unaligned *)(p) = (v))
typedef uint32_t wi_ss2_u8 __attribute__((vector_size(32)));

WI_SS2_INLINE float wi_ss2_positive(float v) { return v > 0.0f ? v : 0.0f; }

// Helpers on eight lanes are macros (GNU statement expressions): a 32-byte vector passed to a function changes
// the calling convention between the baseline and AVX2 clones, which clang refuses.
// max(v, 0) lane by lane: v where v > 0, else +0.
#define WI_SS2_POSITIVE8(v) ({ wi_ss2_v8 wi_v_ = (v); (wi_ss2_v8)((wi_ss2_u8)wi_v_ & (wi_ss2_u8)(wi_v_ > 0.0f)); })
// |v| lane by lane (the sign bit cleared).
#define WI_SS2_MAGNITUDE8(v) ((wi_ss2_v8)((wi_ss2_u8)(v) & 0x7FFFFFFFu))
// The lanes' sum, in a fixed order.
#define WI_SS2_LANE_SUM(v) ({ wi_ss2_v8 wi_s_ = (v); \
    ((wi_s_[0] + wi_s_[4]) + (wi_s_[1] + wi_s_[5])) + ((wi_s_[2] + wi_s_[6]) + (wi_s_[3] + wi_s_[7])); })

// A value between two codes, interpolated in the table (exact for whole codes).
WI_SS2_INLINE float wi_ss2_linear(float v, const float *table) {
    if (!(v > 0.0f)) return table[0];   // also NaN
    if (v >= 255.0f) return table[255];
    int i = (int)v;
    if ((float)i == v) return table[i];
    float f = v - (float)i;
    return table[i] * (1.0f - f) + table[i + 1] * f;
}

void wi_ss2_linearize(const uint8_t *rgba, intptr_t stride, intptr_t width, intptr_t height, int premultiplied,
                      const float *to_linear, float *r, float *g, float *b) {
    for (intptr_t y = 0; y < height; y++) {
        const uint8_t *p = rgba + y * stride;
        float *restrict rr = r + y * width, *restrict gg = g + y * width, *restrict bb = b + y * width;
        for (intptr_t x = 0; x < width; x++, p += 4) {
            if (p[3] == 255) {
                rr[x] = to_linear[p[0]];
                gg[x] = to_linear[p[1]];
                bb[x] = to_linear[p[2]];
                continue;
            }
            float a = (float)p[3] / 255.0f, grey = 127.5f * (1.0f - a);
            float cr = (float)p[0], cg = (float)p[1], cb = (float)p[2];
            if (premultiplied) {
                // A premultiplied colour is at most its alpha; a buffer made from bytes may hold more (invalid
                // data that would composite past 255, outside the table): it counts as its alpha.
                float limit = (float)p[3];
                cr = cr < limit ? cr : limit; cg = cg < limit ? cg : limit; cb = cb < limit ? cb : limit;
            } else {
                cr *= a; cg *= a; cb *= a;
            }
            rr[x] = wi_ss2_linear(cr + grey, to_linear);
            gg[x] = wi_ss2_linear(cg + grey, to_linear);
            bb[x] = wi_ss2_linear(cb + grey, to_linear);
        }
    }
}

WI_SS2_INLINE float wi_ss2_cbrt_inline(float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits = bits / 3 + 0x2A5137A0u;
    float y;
    memcpy(&y, &bits, sizeof y);
    float y3 = y * y * y;
    y = y * (y3 + 2.0f * v) / (2.0f * y3 + v);
    y3 = y * y * y;
    y = y * (y3 + 2.0f * v) / (2.0f * y3 + v);
    return v > 0.0f ? y : 0.0f;
}

float wi_ss2_cbrt(float v) { return wi_ss2_cbrt_inline(v); }

// wi_ss2_cbrt_inline on eight lanes (the same operations in each).
#define WI_SS2_CBRT8(value) ({ \
    wi_ss2_v8 wi_c_ = (value); \
    wi_ss2_v8 wi_y_ = (wi_ss2_v8)((wi_ss2_u8)wi_c_ / 3u + 0x2A5137A0u); \
    wi_ss2_v8 wi_y3_ = wi_y_ * wi_y_ * wi_y_; \
    wi_y_ = wi_y_ * (wi_y3_ + 2.0f * wi_c_) / (2.0f * wi_y3_ + wi_c_); \
    wi_y3_ = wi_y_ * wi_y_ * wi_y_; \
    wi_y_ = wi_y_ * (wi_y3_ + 2.0f * wi_c_) / (2.0f * wi_y3_ + wi_c_); \
    (wi_ss2_v8)((wi_ss2_u8)wi_y_ & (wi_ss2_u8)(wi_c_ > 0.0f)); })

WI_MULTIVERSION
void wi_ss2_positive_xyb(const float *r, const float *g, const float *b, intptr_t count,
                         float *x, float *y, float *b_minus_y) {
    const float bias = 0.0037930732552754493f;
    const float cbrt_bias = (float)cbrt((double)bias);
    intptr_t i = 0;
    for (; i + WI_SS2_LANES <= count; i += WI_SS2_LANES) {
        wi_ss2_v8 rv = WI_SS2_LOAD(r + i), gv = WI_SS2_LOAD(g + i), bv = WI_SS2_LOAD(b + i);
        wi_ss2_v8 m0 = WI_SS2_POSITIVE8(0.30f * rv + 0.622f * gv + 0.078f * bv + bias);
        wi_ss2_v8 m1 = WI_SS2_POSITIVE8(0.23f * rv + 0.692f * gv + 0.078f * bv + bias);
        wi_ss2_v8 m2 = WI_SS2_POSITIVE8(0.24342268924547819f * rv + 0.20476744424496821f * gv
                                        + 0.5518098665095537f * bv + bias);
        wi_ss2_v8 l0 = WI_SS2_CBRT8(m0) - cbrt_bias, l1 = WI_SS2_CBRT8(m1) - cbrt_bias;
        wi_ss2_v8 l2 = WI_SS2_CBRT8(m2) - cbrt_bias;
        wi_ss2_v8 xv = 0.5f * (l0 - l1), yv = 0.5f * (l0 + l1);
        WI_SS2_STORE(x + i, xv * 14.0f + 0.42f);
        WI_SS2_STORE(y + i, yv + 0.01f);
        WI_SS2_STORE(b_minus_y + i, (l2 - yv) + 0.55f);
    }
    for (; i < count; i++) {
        float rv = r[i], gv = g[i], bv = b[i];
        float m0 = wi_ss2_positive(0.30f * rv + 0.622f * gv + 0.078f * bv + bias);
        float m1 = wi_ss2_positive(0.23f * rv + 0.692f * gv + 0.078f * bv + bias);
        float m2 = wi_ss2_positive(0.24342268924547819f * rv + 0.20476744424496821f * gv + 0.5518098665095537f * bv + bias);
        float l0 = wi_ss2_cbrt_inline(m0) - cbrt_bias, l1 = wi_ss2_cbrt_inline(m1) - cbrt_bias;
        float l2 = wi_ss2_cbrt_inline(m2) - cbrt_bias;
        float xv = 0.5f * (l0 - l1), yv = 0.5f * (l0 + l1);
        x[i] = xv * 14.0f + 0.42f;
        y[i] = yv + 0.01f;
        b_minus_y[i] = (l2 - yv) + 0.55f;
    }
}

// In place is safe: output pixel k is written after every read at or below index k and before any read above it.
void wi_ss2_halve(float *plane, intptr_t width, intptr_t height) {
    intptr_t w2 = (width + 1) / 2, h2 = (height + 1) / 2, even_width = width / 2;
    for (intptr_t oy = 0; oy < h2; oy++) {
        intptr_t y0 = oy * 2, y1 = y0 + 1 < height ? y0 + 1 : height - 1;
        const float *top = plane + y0 * width, *bottom = plane + y1 * width;
        float *dst = plane + oy * w2;
        if (y1 != y0) {
            for (intptr_t ox = 0; ox < even_width; ox++)
                dst[ox] = (top[2 * ox] + top[2 * ox + 1] + bottom[2 * ox] + bottom[2 * ox + 1]) / 4.0f;
            if (even_width < w2) dst[even_width] = (top[width - 1] + bottom[width - 1]) / 2.0f;
        } else {
            // A block cut by the edge averages the pixels it has.
            for (intptr_t ox = 0; ox < even_width; ox++) dst[ox] = (top[2 * ox] + top[2 * ox + 1]) / 2.0f;
            if (even_width < w2) dst[even_width] = top[width - 1];
        }
    }
}

// The index i mirrored into 0..<n (half-sample symmetric, repeated for tiny n).
static intptr_t wi_ss2_mirror(intptr_t i, intptr_t n) {
    while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - 1 - i;
    return i;
}

WI_MULTIVERSION
void wi_ss2_blur(const float *a, const float *b, intptr_t width, intptr_t height, const float *taps,
                 float *row, float *horizontal, float *out) {
    const float k0 = taps[0], k1 = taps[1], k2 = taps[2], k3 = taps[3], k4 = taps[4], k5 = taps[5];
    memset(row, 0, WI_SS2_RADIUS * sizeof *row);
    memset(row + WI_SS2_RADIUS + width, 0, WI_SS2_RADIUS * sizeof *row);
    float *p = row + WI_SS2_RADIUS;
    for (intptr_t y = 0; y < height; y++) {
        const float *src = a + y * width;
        float *restrict dst = horizontal + y * width;
        if (b) {
            const float *other = b + y * width;
            for (intptr_t x = 0; x < width; x++) p[x] = src[x] * other[x];
        } else {
            memcpy(p, src, (size_t)width * sizeof *p);
        }
        // Symmetric taps: one multiply per pair. p[x - 5 … x + 5] is row[x … x + 10]. Eight columns a step in
        // vector values (also at -O0, where a scalar loop costs tens of instructions a tap), then one at a time.
        const float *q = row;
        intptr_t x = 0;
        for (; x + WI_SS2_LANES <= width; x += WI_SS2_LANES) {
            wi_ss2_v8 s = k5 * WI_SS2_LOAD(q + x + 5);
            s += k0 * (WI_SS2_LOAD(q + x) + WI_SS2_LOAD(q + x + 10));
            s += k1 * (WI_SS2_LOAD(q + x + 1) + WI_SS2_LOAD(q + x + 9));
            s += k2 * (WI_SS2_LOAD(q + x + 2) + WI_SS2_LOAD(q + x + 8));
            s += k3 * (WI_SS2_LOAD(q + x + 3) + WI_SS2_LOAD(q + x + 7));
            s += k4 * (WI_SS2_LOAD(q + x + 4) + WI_SS2_LOAD(q + x + 6));
            WI_SS2_STORE(dst + x, s);
        }
        for (; x < width; x++) {
            float s = k5 * q[x + 5];
            s += k0 * (q[x] + q[x + 10]);
            s += k1 * (q[x + 1] + q[x + 9]);
            s += k2 * (q[x + 2] + q[x + 8]);
            s += k3 * (q[x + 3] + q[x + 7]);
            s += k4 * (q[x + 4] + q[x + 6]);
            dst[x] = s;
        }
    }
    for (intptr_t y = 0; y < height; y++) {
        const float *r[11];
        for (int t = 0; t < 11; t++) r[t] = horizontal + wi_ss2_mirror(y - WI_SS2_RADIUS + t, height) * width;
        const float *restrict r0 = r[0], *restrict r1 = r[1], *restrict r2 = r[2], *restrict r3 = r[3];
        const float *restrict r4 = r[4], *restrict r5 = r[5], *restrict r6 = r[6], *restrict r7 = r[7];
        const float *restrict r8 = r[8], *restrict r9 = r[9], *restrict r10 = r[10];
        float *restrict dst = out + y * width;
        intptr_t x = 0;
        for (; x + WI_SS2_LANES <= width; x += WI_SS2_LANES) {
            wi_ss2_v8 s = k5 * WI_SS2_LOAD(r5 + x);
            s += k0 * (WI_SS2_LOAD(r0 + x) + WI_SS2_LOAD(r10 + x));
            s += k1 * (WI_SS2_LOAD(r1 + x) + WI_SS2_LOAD(r9 + x));
            s += k2 * (WI_SS2_LOAD(r2 + x) + WI_SS2_LOAD(r8 + x));
            s += k3 * (WI_SS2_LOAD(r3 + x) + WI_SS2_LOAD(r7 + x));
            s += k4 * (WI_SS2_LOAD(r4 + x) + WI_SS2_LOAD(r6 + x));
            WI_SS2_STORE(dst + x, s);
        }
        for (; x < width; x++) {
            float s = k5 * r5[x];
            s += k0 * (r0[x] + r10[x]);
            s += k1 * (r1[x] + r9[x]);
            s += k2 * (r2[x] + r8[x]);
            s += k3 * (r3[x] + r7[x]);
            s += k4 * (r4[x] + r6[x]);
            dst[x] = s;
        }
    }
}

WI_MULTIVERSION
void wi_ss2_ssim_sums(const float *mu1, const float *mu2, const float *sigma11, const float *sigma22,
                      const float *sigma12, intptr_t width, intptr_t height, float c2, double sums[2]) {
    double sum1 = 0, sum4 = 0;
    for (intptr_t y = 0; y < height; y++) {
        const float *a1 = mu1 + y * width, *b1 = mu2 + y * width, *aa = sigma11 + y * width;
        const float *bb = sigma22 + y * width, *ab = sigma12 + y * width;
        // Eight lanes of partial sums: a Float reduction does not vectorise by itself.
        wi_ss2_v8 v1 = {0}, v4 = {0};
        intptr_t i = 0;
        for (; i + WI_SS2_LANES <= width; i += WI_SS2_LANES) {
            wi_ss2_v8 a = WI_SS2_LOAD(a1 + i), b = WI_SS2_LOAD(b1 + i), diff = a - b;
            wi_ss2_v8 num_m = 1.0f - diff * diff;
            wi_ss2_v8 num_s = 2.0f * (WI_SS2_LOAD(ab + i) - a * b) + c2;
            wi_ss2_v8 den_s = (WI_SS2_LOAD(aa + i) - a * a) + (WI_SS2_LOAD(bb + i) - b * b) + c2;
            wi_ss2_v8 d = WI_SS2_POSITIVE8(1.0f - num_m * num_s / den_s), d2 = d * d;
            v1 += d;
            v4 += d2 * d2;
        }
        float r1 = WI_SS2_LANE_SUM(v1), r4 = WI_SS2_LANE_SUM(v4);
        for (; i < width; i++) {
            float a = a1[i], b = b1[i], diff = a - b;
            float num_m = 1.0f - diff * diff;
            float num_s = 2.0f * (ab[i] - a * b) + c2;
            float den_s = (aa[i] - a * a) + (bb[i] - b * b) + c2;
            float d = wi_ss2_positive(1.0f - num_m * num_s / den_s), d2 = d * d;
            r1 += d;
            r4 += d2 * d2;
        }
        sum1 += r1;
        sum4 += r4;
    }
    sums[0] = sum1;
    sums[1] = sum4;
}

WI_MULTIVERSION
void wi_ss2_edge_sums(const float *image1, const float *mu1, const float *image2, const float *mu2,
                      intptr_t width, intptr_t height, double sums[4]) {
    double total[4] = {0, 0, 0, 0};
    for (intptr_t y = 0; y < height; y++) {
        const float *p1 = image1 + y * width, *q1 = mu1 + y * width, *p2 = image2 + y * width, *q2 = mu2 + y * width;
        wi_ss2_v8 v1 = {0}, v4 = {0}, u1 = {0}, u4 = {0};
        intptr_t i = 0;
        for (; i + WI_SS2_LANES <= width; i += WI_SS2_LANES) {
            wi_ss2_v8 e2 = WI_SS2_MAGNITUDE8(WI_SS2_LOAD(p2 + i) - WI_SS2_LOAD(q2 + i));
            wi_ss2_v8 e1 = WI_SS2_MAGNITUDE8(WI_SS2_LOAD(p1 + i) - WI_SS2_LOAD(q1 + i));
            wi_ss2_v8 d = (1.0f + e2) / (1.0f + e1) - 1.0f;
            wi_ss2_v8 artefact = WI_SS2_POSITIVE8(d), lost = WI_SS2_POSITIVE8(-d);
            wi_ss2_v8 a2 = artefact * artefact, l2 = lost * lost;
            v1 += artefact;
            v4 += a2 * a2;
            u1 += lost;
            u4 += l2 * l2;
        }
        float art1 = WI_SS2_LANE_SUM(v1), art4 = WI_SS2_LANE_SUM(v4);
        float lost1 = WI_SS2_LANE_SUM(u1), lost4 = WI_SS2_LANE_SUM(u4);
        for (; i < width; i++) {
            float d = (1.0f + fabsf(p2[i] - q2[i])) / (1.0f + fabsf(p1[i] - q1[i])) - 1.0f;
            float artefact = wi_ss2_positive(d), lost = wi_ss2_positive(-d);
            float a2 = artefact * artefact, l2 = lost * lost;
            art1 += artefact;
            art4 += a2 * a2;
            lost1 += lost;
            lost4 += l2 * l2;
        }
        total[0] += art1;
        total[1] += art4;
        total[2] += lost1;
        total[3] += lost4;
    }
    memcpy(sums, total, sizeof total);
}
