// What 4:2:0 chroma subsampling alone does to an image (ImageCodec's `ChromaDetail`): the chroma of BT.601
// full-range YCbCr averaged over 2×2 blocks and brought back by libjpeg-turbo's triangle ("fancy") upsampling,
// luma untouched. In C because the Swift loop cost ~2 ms of every scored JPEG q=auto request in release (7 % of
// it) and far more unoptimised; eight pixels a step, the same float operations in the same order, so the same bytes.
#ifndef WI_CHROMA_DETAIL_H
#define WI_CHROMA_DETAIL_H

#include <stdint.h>

/// The floats of scratch `wi_chroma_420_roundtrip` needs for a `width × height` image: the two chroma planes at
/// quarter size and each chroma row blended horizontally at full width.
intptr_t wi_chroma_420_scratch_count(intptr_t width, intptr_t height);

/// Writes to `dst` (`dst_stride` bytes a row) the `width × height` RGBA8 image at `src` (`src_stride` bytes a row)
/// with its chroma subsampled 4:2:0 and upsampled again; alpha is copied, and with `premultiplied` ≠ 0 each colour
/// is kept at most its alpha. `scratch` holds `wi_chroma_420_scratch_count(width, height)` floats. Width and height
/// at least 1; `src` and `dst` must not overlap.
void wi_chroma_420_roundtrip(const uint8_t *src, intptr_t src_stride, uint8_t *dst, intptr_t dst_stride,
                             intptr_t width, intptr_t height, int premultiplied, float *scratch);

#endif
