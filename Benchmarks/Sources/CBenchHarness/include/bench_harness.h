#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H
// Direct calls into libjpeg-turbo, libpng, libwebp and giflib, with no Swift in between: the baseline the
// codec benchmark compares ImageCodec against. Each returns 0 on success.
#include <stddef.h>
#include <stdint.h>

/// Monotonic clock in nanoseconds.
uint64_t bench_now_ns(void);

// MARK: GIF and WebP (harness_gif_webp.c)

/// Decodes a still WebP into a freshly calloc'd RGBA buffer with WebPDecode (premultiplied when asked),
/// then frees it: what ImageCodec's still WebP decode does. Returns 0 on success.
int bench_webp_decode(const uint8_t *data, size_t size, int premultiplied);

/// Decodes every frame of a GIF with DGifSlurp (memory reader) and composites each onto an RGBA canvas
/// (transparency, disposal none/background/previous, clipping), copying every frame into its own calloc'd
/// buffer as ImageCodec's preloaded decode does; frees everything. Returns the frame count, or -1.
int bench_gif_decode_all(const uint8_t *data, size_t size);

#endif
