#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H
// Direct calls into libjpeg-turbo, libpng, libwebp and giflib, with no Swift in between: the baseline the
// codec benchmark compares ImageCodec against. Each returns 0 on success.
#include <stddef.h>
#include <stdint.h>

/// Monotonic clock in nanoseconds.
uint64_t bench_now_ns(void);

// MARK: codec-jpeg-png (harness_jpeg_png.c)

/// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID): robust to other processes
/// competing for the cores, unlike wall time.
uint64_t bench_thread_cpu_ns(void);

/// Decodes a JPEG with libjpeg-turbo straight into one malloc'd RGBA8 buffer (JCS_EXT_RGBA, rows written in
/// place, setjmp error exit). `*pixels` is freed by the caller with `free`. Returns 0 on success.
int bench_jpeg_decode_rgba(const uint8_t *data, size_t size, uint8_t **pixels, uint32_t *width, uint32_t *height);

/// Decodes a PNG with libpng into one malloc'd RGBA8 buffer (palette/gray/tRNS expanded, 16→8 bit, Adam7),
/// premultiplying colour by alpha when `premultiply` != 0. Returns 0 on success.
int bench_png_decode_rgba(const uint8_t *data, size_t size, int premultiply, uint8_t **pixels, uint32_t *width,
                          uint32_t *height);
// MARK: GIF and WebP (harness_gif_webp.c)

/// Decodes a still WebP into a freshly calloc'd RGBA buffer with WebPDecode (premultiplied when asked),
/// then frees it: what ImageCodec's still WebP decode does. Returns 0 on success.
int bench_webp_decode(const uint8_t *data, size_t size, int premultiplied);

/// Decodes every frame of a GIF with DGifSlurp (memory reader) and composites each onto an RGBA canvas
/// (transparency, disposal none/background/previous, clipping), copying every frame into its own calloc'd
/// buffer as ImageCodec's preloaded decode does; frees everything. Returns the frame count, or -1.
int bench_gif_decode_all(const uint8_t *data, size_t size);

// MARK: kvcache (harness_sqlite.c)

/// The floor of KVStorage's inline reads: SQLite called from C on a table shaped like KVStorage's manifest
/// (same schema and PRAGMAs: WAL, synchronous=NORMAL, 8 MB cache, mmap), `count` rows of `size`-byte blobs
/// written one autocommit upsert each, then `reads` lookups of random keys, each a cached prepared SELECT:
/// bind the key, step, copy the blob into a malloc'd buffer, free it, reset. `*per_read_txn_ns` gets the
/// time per read with every SELECT its own read transaction (what KVStorage did before snapshots),
/// `*shared_txn_ns` with every read inside one BEGIN … COMMIT (what its snapshots do), `*write_ns` the time
/// per upsert. `path` must not exist. Returns 0 on success.
int bench_sqlite_kv_floor(const char *path, int count, int size, int reads, double *write_ns,
                          double *per_read_txn_ns, double *shared_txn_ns);

#endif
