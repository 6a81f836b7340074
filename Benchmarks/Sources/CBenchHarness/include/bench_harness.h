#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H
// Direct calls into libjpeg-turbo, libpng, libwebp and giflib, with no Swift in between: the baseline the
// codec benchmark compares ImageCodec against. Each returns 0 on success.
#include <stddef.h>
#include <stdint.h>
// SQLite's API, for the Swift floors of the "KVCache at scale" read (KVCacheScaleBench+SwiftFloor.swift).
#include <sqlite3.h>

/// Monotonic clock in nanoseconds.
uint64_t bench_now_ns(void);

// MARK: codec-jpeg-png (harness_jpeg_png.c)

/// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID): robust to other processes
/// competing for the cores, unlike wall time.
uint64_t bench_thread_cpu_ns(void);

/// Decodes a JPEG with libjpeg-turbo straight into one malloc'd RGBA8 buffer (JCS_EXT_RGBA, rows written in
/// place, setjmp error exit). `*pixels` is freed by the caller with `free`. Returns 0 on success.
int bench_jpeg_decode_rgba(const uint8_t *data, size_t size, uint8_t **pixels, uint32_t *width, uint32_t *height);

/// `bench_jpeg_decode_rgba` with libjpeg's DCT-domain scaling 1/`scale_denom` (1, 2, 4 or 8): the floor of a
/// downsampled JPEG decode (entropy decoding of every coefficient is still needed).
int bench_jpeg_decode_rgba_scaled(const uint8_t *data, size_t size, unsigned scale_denom, uint8_t **pixels,
                                  uint32_t *width, uint32_t *height);

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

// MARK: codec-modern (harness_modern.c)

/// Decodes the first image of an AVIF with libavif (1 thread, Exif/XMP ignored) into a calloc'd 8-bit RGBA
/// buffer, premultiplied, then frees it: what WebImageAVIF does for a still. Returns 0 on success.
int bench_avif_decode(const uint8_t *data, size_t size);

/// Decodes the first frame of a JPEG XL with libjxl (no parallel runner, un-premultiplied RGBA8 output into
/// a calloc'd buffer, premultiplied after when it has alpha), then frees it. Returns 0 on success.
int bench_jxl_decode(const uint8_t *data, size_t size);

/// Decodes the primary image of a HEIF with libheif (decoding threads 0, 8-bit interleaved RGBA), copies it
/// into a calloc'd buffer (premultiplied when it has alpha), then frees everything. Returns 0 on success.
int bench_heif_decode(const uint8_t *data, size_t size);

// MARK: kvcache (harness_sqlite.c)

/// The floor of KVStorage's inline reads and writes: SQLite called from C on a table shaped like
/// KVStorage's manifest (same schema and PRAGMAs: WAL, synchronous=NORMAL, 8 MB cache, mmap). On a fresh
/// database at `path`: `count` rows of `size`-byte blobs written one autocommit upsert each (`*write_ns`
/// per upsert), then `reads` lookups of random keys inside one BEGIN … COMMIT (`*shared_txn_ns` per read,
/// what KVStorage's snapshots do). Then the same on a fresh database at `second_path` with every lookup its
/// own read transaction (`*per_read_txn_ns`, what KVStorage did before snapshots). Each lookup is a cached
/// prepared SELECT: bind the key, step, copy the blob into a malloc'd buffer, free it, reset. The paths
/// must not exist. Returns 0 on success.
int bench_sqlite_kv_floor(const char *path, const char *second_path, int count, int size, int reads,
                          double *write_ns, double *per_read_txn_ns, double *shared_txn_ns);

// MARK: memcached (harness_memcached.c)

/// The floor of a shared-tier hit: `memcached_get` of `key` from one memcached at `host:port` with the handle
/// set up like WebImageMemcached's (ketama, TCP_NODELAY), called `iterations` times after a warm-up, from C.
/// Writes the median nanoseconds per call to `*median_ns`. Returns 0 on success, -1 when a get fails or the
/// value is not `expected_size` bytes.
int bench_memcached_get(const char *host, unsigned port, const char *key, size_t expected_size, int iterations,
                        uint64_t *median_ns);

// MARK: KVCache at scale (harness_kvcache_scale.c)

/// Creates a KVStorage manifest of schema version 1 (f51e949) at `manifest_path` holding `count` inline rows
/// (keys "key-<i>", `size` bytes each, byte j of value i = i * 31 + j, access times first_time_us + i), in
/// large transactions without a journal: the documented fast path to a large store for the "KVCache at
/// scale" suite (opening it upgrades the schema); the file is fsync'd. `bench_layout_populate` with the current layout.
/// Returns 0 on success.
int bench_kvcache_populate_v1(const char *manifest_path, int count, int size, long long first_time_us);

/// The SQLite floor of a random read at scale: `reads` lookups of random keys "key-<i>" (i < count) in the
/// manifest at `manifest_path` with KVStorage's PRAGMAs (8 MB cache, 256 MB mmap) and its read transactions
/// (renewed every 1,000 reads), each blob copied out; `*cpu_ns_per_read` is the thread CPU time per lookup.
/// Returns 0 on success.
int bench_sqlite_random_reads(const char *manifest_path, int count, int reads, double *cpu_ns_per_read);

/// The SQLite floor of a random overwrite at scale: `writes` upserts of random existing keys "key-<i>"
/// (i < count, from `seed`) with `size`-byte values into the manifest at `manifest_path`, each its own
/// autocommit transaction, with the statement and PRAGMAs of KVStorage's inline save (WAL,
/// synchronous=NORMAL, 8 MB cache, 256 MB mmap, recursive triggers so the totals triggers fire), after
/// `writes / 5` untimed ones that warm the new connection's page cache. No WAL
/// checkpoint runs inside the timing (`wal_autocheckpoint=0`; KVStorage checkpoints on another thread); one
/// passive checkpoint runs after it. `*cpu_ns_per_write` is the thread CPU time per upsert. Safe beside a
/// live `DiskCache` on the same folder (another connection, as another process would be); sizes are kept, so
/// the totals do not change. Returns 0 on success.
int bench_sqlite_random_upserts(const char *manifest_path, int count, int writes, int size, unsigned seed,
                                double *cpu_ns_per_write);

/// The physical floor of a random read at scale, below any B-tree: `reads` `pread`s of `size` bytes at random
/// page-aligned offsets of the file at `path` (one warm-up pass first, so its pages are in the page cache);
/// `*cpu_ns_per_read` is the thread CPU time per `pread`. What one random 2 KB costs in a 2 MB file against a
/// 4 GB one, with no SQLite on top (kernel page-cache lookup, TLB and cache misses). Returns 0 on success.
int bench_pread_random(const char *path, int reads, int size, double *cpu_ns_per_read);

// MARK: KVCache manifest layouts (harness_sqlite_layouts.c, driven by Benchmarks/scripts/kvcache-layouts)

/// The manifest layouts `bench_layout_*` builds: KVStorage's today (a rowid table whose `key TEXT PRIMARY
/// KEY` is a separate unique index: two B-tree descents per lookup), a WITHOUT ROWID table keyed by the key
/// text (one descent; rows larger than about a quarter of a page spill to overflow pages), and a rowid table
/// whose INTEGER PRIMARY KEY is a 63-bit hash of the key (`bench_layout_key_hash`), the key a column compared
/// by the lookup (one descent, no key index).
enum { BENCH_LAYOUT_CURRENT = 0, BENCH_LAYOUT_WITHOUT_ROWID = 1, BENCH_LAYOUT_HASHED_ROWID = 2 };

/// FNV-1a 64 of the bytes with SplitMix64's finaliser, cut to 63 bits (never negative): the rowid of
/// BENCH_LAYOUT_HASHED_ROWID. Stable across processes.
int64_t bench_layout_key_hash(const char *key, size_t length);

/// Creates a manifest at `path` (must not exist) in `layout` with `page_size`-byte pages holding `count`
/// inline rows as `bench_kvcache_populate_v1` writes them (keys "key-<i>", `size` bytes each), inserted in
/// the order of the table's B-tree in large transactions without a journal, then switched to WAL and
/// fsync'd. Returns 0 on success.
int bench_layout_populate(const char *path, int layout, int page_size, int count, int size, long long first_time_us);

/// One measurement of `bench_layout_random_reads`.
typedef struct {
    double cpu_ns;           ///< thread CPU time per lookup
    double wall_ns;          ///< wall-clock time per lookup
    double cache_hits;       ///< SQLITE_DBSTATUS_CACHE_HIT per lookup in the timed pass (mapped pages are neither)
    double cache_misses;     ///< SQLITE_DBSTATUS_CACHE_MISS per lookup in the timed pass (each one a page read)
    double pages_per_lookup; ///< hits + misses per lookup of the same keys with mmap_size=0: pages touched
    long long mmap_size;     ///< `PRAGMA mmap_size` read back after `pragmas`
} bench_layout_reads;

/// Opens the manifest at `path` (the default VFS, or with `full_map` one that maps the whole file, beyond
/// SQLITE_MAX_MMAP_SIZE), runs `pragmas`, then `reads` lookups of random keys "key-<i>" (i < count) as
/// KVStorage's value read does (a cached SELECT of filename, size, inline_data; the blob copied into a
/// malloc'd buffer; a fresh read transaction every 1,000 reads): one warm-up pass, one timed pass, one
/// untimed counting pass with mmap_size=0. Returns 0 on success.
int bench_layout_random_reads(const char *path, int layout, int count, int reads, const char *pragmas, int full_map,
                              bench_layout_reads *out);

/// Registers the whole-file mapping VFS "bench-fullmap" (a read-only experiment; see the .c file). 0 on success.
int bench_layout_register_fullmap_vfs(void);

/// The cheapest possible read: `reads` memcpys of `size` bytes at random page-aligned offsets of the file at
/// `path`, memory-mapped and pre-faulted (MADV_POPULATE_READ, else a touch of every page), after a warm-up
/// pass; `*cpu_ns_per_read` is thread CPU time per copy. Returns 0 on success.
int bench_mmap_memcpy_random(const char *path, int reads, int size, double *cpu_ns_per_read);

/// The same copies from `length` bytes of pre-faulted anonymous memory (with `huge_pages`, MADV_HUGEPAGE:
/// 2 MB pages where the kernel grants them, so few TLB misses): what is left of the floor without 4 KB
/// page-table walks. Returns 0 on success.
int bench_anon_memcpy_random(long long length, int huge_pages, int reads, int size, double *cpu_ns_per_read);

/// Migrates the manifest at `path` from KVStorage's layout (BENCH_LAYOUT_CURRENT) to BENCH_LAYOUT_HASHED_ROWID
/// in place, in one write transaction with KVStorage's PRAGMAs, then checkpoints (TRUNCATE): the cost of the
/// schema change at first open. Writes wall and thread CPU seconds and the file size before and after (the
/// old table's pages stay in the file as free pages). Returns 0 on success.
int bench_layout_migrate_to_hashed(const char *path, double *wall_s, double *cpu_s, long long *bytes_before,
                                   long long *bytes_after);

/// Little CMS alone: converts `count` RGBA8 `pixels` in place from the ICC `profile` to sRGB (relative
/// colorimetric, BPC, alpha copied, no cache: the library's flags). Returns the thread CPU nanoseconds of
/// `cmsDoTransform`, or -1 when lcms refuses the profile or the transform.
int64_t bench_lcms_transform_rgba8(const uint8_t *profile, size_t profile_size, uint8_t *pixels, size_t count);

#endif
