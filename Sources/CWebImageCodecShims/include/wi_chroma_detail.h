// What 4:2:0 chroma subsampling alone does to an image (ImageCodec's `ChromaDetail`): the chroma of BT.601
// full-range YCbCr averaged over 2×2 blocks and brought back by libjpeg-turbo's triangle ("fancy") upsampling,
// luma untouched. In C because the Swift loop cost ~2 ms of every scored JPEG q=auto request in release (7 % of
// it) and far more unoptimised; the same float operations in the same order, so the same bytes.
#ifndef WI_CHROMA_DETAIL_H
#define WI_CHROMA_DETAIL_H

#include <stdint.h>

/// Writes to `dst` (`dst_stride` bytes a row) the `width × height` RGBA8 image at `src` (`src_stride` bytes a row)
/// with its chroma subsampled 4:2:0 and upsampled again; alpha is copied, and with `premultiplied` ≠ 0 each colour
/// is kept at most its alpha. `cb` and `cr` are scratch of `((width + 1) / 2) × ((height + 1) / 2)` floats each.
/// Width and height at least 1; `src` and `dst` must not overlap.
void wi_chroma_420_roundtrip(const uint8_t *src, intptr_t src_stride, uint8_t *dst, intptr_t dst_stride,
                             intptr_t width, intptr_t height, int premultiplied, float *cb, float *cr);

#endif
