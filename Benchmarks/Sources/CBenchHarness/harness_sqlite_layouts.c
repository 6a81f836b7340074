// Manifest layouts and settings for a random 2 KB read at 1k / 100k / 1M entries, measured from C (issue 14,
// "Flat cost at scale"): which layout keeps a read at 1M closest to its cost at 1k, and the physical floors
// below any B-tree. Driven by Benchmarks/scripts/kvcache-layouts (see bench_harness.h for each function).
#include "bench_harness.h"
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static uint64_t layouts_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t layouts_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// MARK: the layouts

// The columns of KVStorage's manifest, in its order (the inline value before the times).
#define LAYOUT_COLUMNS \
    "filename TEXT, size INTEGER NOT NULL, inline_data BLOB, modification_time INTEGER NOT NULL," \
    " last_access_time INTEGER NOT NULL, extended_data BLOB"

static const char *layout_schema(int layout) {
    switch (layout) {
    case BENCH_LAYOUT_CURRENT: // KVStorage today: a rowid table, the key in its automatic unique index.
        return "CREATE TABLE manifest (key TEXT PRIMARY KEY NOT NULL, " LAYOUT_COLUMNS ");"
               "CREATE INDEX manifest_last_access_time ON manifest(last_access_time);";
    case BENCH_LAYOUT_WITHOUT_ROWID: // One B-tree keyed by the key text.
        return "CREATE TABLE manifest (key TEXT PRIMARY KEY NOT NULL, " LAYOUT_COLUMNS ") WITHOUT ROWID;"
               "CREATE INDEX manifest_last_access_time ON manifest(last_access_time);";
    case BENCH_LAYOUT_HASHED_ROWID: // The rowid is a 63-bit hash of the key; the key is a column, compared.
        return "CREATE TABLE manifest (id INTEGER PRIMARY KEY, key TEXT NOT NULL, " LAYOUT_COLUMNS ");"
               "CREATE INDEX manifest_last_access_time ON manifest(last_access_time);";
    default:
        return NULL;
    }
}

static const char *layout_insert(int layout) {
    return layout == BENCH_LAYOUT_HASHED_ROWID
        ? "INSERT INTO manifest VALUES (?5, ?1, NULL, ?2, ?3, ?4, ?4, NULL)"
        : "INSERT INTO manifest VALUES (?1, NULL, ?2, ?3, ?4, ?4, NULL)";
}

/// What KVStorage's value read selects (`HotStatement.selectValue`), per layout.
static const char *layout_select(int layout) {
    return layout == BENCH_LAYOUT_HASHED_ROWID
        ? "SELECT filename, size, inline_data FROM manifest WHERE id = ?2 AND key = ?1"
        : "SELECT filename, size, inline_data FROM manifest WHERE key = ?1";
}

int64_t bench_layout_key_hash(const char *key, size_t length) {
    // FNV-1a 64 over the bytes, then SplitMix64's finaliser (FNV's low bits are weak), cut to 63 bits so the
    // rowid is never negative. Stable across processes and versions (unlike Swift's seeded Hasher).
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < length; i++) { h ^= (unsigned char)key[i]; h *= 0x100000001b3ull; }
    h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27; h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return (int64_t)(h >> 1);
}

typedef struct { int64_t hash; int index; int length; char key[24]; } layout_row;

static int compare_hash(const void *a, const void *b) {
    int64_t x = ((const layout_row *)a)->hash, y = ((const layout_row *)b)->hash;
    return x < y ? -1 : x > y;
}

static int compare_key(const void *a, const void *b) {
    // BINARY collation: memcmp of the bytes, shorter first on a tie.
    const layout_row *x = a, *y = b;
    int c = memcmp(x->key, y->key, (size_t)(x->length < y->length ? x->length : y->length));
    return c != 0 ? c : x->length - y->length;
}

int bench_layout_populate(const char *path, int layout, int page_size, int count, int size, long long first_time_us) {
    int status = -1;
    sqlite3 *db = NULL;
    sqlite3_stmt *insert = NULL;
    unsigned char *value = malloc(size > 0 ? (size_t)size : 1);
    layout_row *rows = malloc(sizeof(layout_row) * (size_t)(count > 0 ? count : 1));
    char pragma[64];
    const char *schema = layout_schema(layout);
    if (value == NULL || rows == NULL || schema == NULL || count < 0 || size < 0) goto done;
    // Insert in the order of the table's B-tree (rowid, key text or key hash), as an append: a packed tree
    // in seconds. KVStorage's stores grow by random inserts (pages ~70 % full): reads touch the same number
    // of levels.
    for (int i = 0; i < count; i++) {
        rows[i].length = snprintf(rows[i].key, sizeof rows[i].key, "key-%d", i);
        rows[i].index = i;
        rows[i].hash = bench_layout_key_hash(rows[i].key, (size_t)rows[i].length);
    }
    if (layout == BENCH_LAYOUT_HASHED_ROWID) qsort(rows, (size_t)count, sizeof *rows, compare_hash);
    if (layout == BENCH_LAYOUT_WITHOUT_ROWID) qsort(rows, (size_t)count, sizeof *rows, compare_key);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) goto done;
    snprintf(pragma, sizeof pragma, "PRAGMA page_size=%d;", page_size);
    if (sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK) goto done;
    // Bulk load: no journal, no syncs; WAL (what KVStorage uses) is set at the end.
    if (sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144;", NULL, NULL, NULL) != SQLITE_OK) goto done;
    if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) goto done;
    if (sqlite3_prepare_v2(db, layout_insert(layout), -1, &insert, NULL) != SQLITE_OK) goto done;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) goto done;
    for (int r = 0; r < count; r++) {
        int i = rows[r].index;
        for (int j = 0; j < size; j++) value[j] = (unsigned char)(i * 31 + j);
        sqlite3_bind_text(insert, 1, rows[r].key, rows[r].length, SQLITE_TRANSIENT);
        sqlite3_bind_int64(insert, 2, size);
        sqlite3_bind_blob(insert, 3, value, size, SQLITE_TRANSIENT);
        sqlite3_bind_int64(insert, 4, first_time_us + i);
        if (layout == BENCH_LAYOUT_HASHED_ROWID) sqlite3_bind_int64(insert, 5, rows[r].hash);
        // A hash collision would fail the insert (UNIQUE rowid): reported, not hidden.
        if (sqlite3_step(insert) != SQLITE_DONE) {
            fprintf(stderr, "populate %s: %s\n", path, sqlite3_errmsg(db));
            goto done;
        }
        sqlite3_reset(insert);
        if (r % 100000 == 99999 && (sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK)) goto done;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto done;
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK) goto done;
    status = 0;
done:
    sqlite3_finalize(insert);
    sqlite3_close_v2(db);
    free(value);
    free(rows);
    if (status == 0) {
        // Write the store back now: its writeback must not be charged to the reads that follow.
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) != 0) status = -1;
        if (fd >= 0) close(fd);
    }
    return status;
}

// MARK: a VFS that maps the whole database file

// SQLite's pager asks the VFS (xFetch) for a pointer to every page it reads outside a write transaction
// once `mmap_size` > 0; the unix VFS maps at most `mmap_size`, which PRAGMA mmap_size caps at the compile-time
// SQLITE_MAX_MMAP_SIZE (0x7fff0000, 2 GB, in SQLite's default build and Debian's). Pages beyond it are read
// with pread into the page cache. This shim over the default VFS maps the whole main database file (as it is
// at open) and serves xFetch from that map, falling back to the default for pages beyond it. For this
// read-only experiment only: a product version must remap when the file grows and unmap before a truncate
// (what os_unix.c's unixMapfile/unixTruncate do), or a read past the new end raises SIGBUS.

typedef struct {
    sqlite3_file base;
    sqlite3_file *real; // the default VFS's file, allocated right after this struct
    unsigned char *map;
    sqlite3_int64 map_size;
} fullmap_file;

static sqlite3_vfs fullmap_vfs;
#define REAL(f) (((fullmap_file *)(f))->real)

static int fullmap_close(sqlite3_file *f) {
    fullmap_file *p = (fullmap_file *)f;
    if (p->map != NULL) munmap(p->map, (size_t)p->map_size);
    p->map = NULL;
    return p->real->pMethods->xClose(p->real);
}
static int fullmap_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int fullmap_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xWrite(REAL(f), b, n, o); }
static int fullmap_truncate(sqlite3_file *f, sqlite3_int64 s) { return REAL(f)->pMethods->xTruncate(REAL(f), s); }
static int fullmap_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int fullmap_file_size(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int fullmap_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int fullmap_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int fullmap_check_reserved(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int fullmap_file_control(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int fullmap_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int fullmap_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int fullmap_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp) { return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, pp); }
static int fullmap_shm_lock(sqlite3_file *f, int o, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, flags); }
static void fullmap_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int fullmap_shm_unmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }

static int fullmap_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **pp) {
    fullmap_file *p = (fullmap_file *)f;
    if (p->map != NULL && offset + amount <= p->map_size) {
        *pp = p->map + offset;
        return SQLITE_OK;
    }
    return p->real->pMethods->xFetch(p->real, offset, amount, pp);
}

static int fullmap_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    fullmap_file *p = (fullmap_file *)f;
    if (page != NULL && p->map != NULL && (unsigned char *)page >= p->map && (unsigned char *)page < p->map + p->map_size) {
        return SQLITE_OK;
    }
    return p->real->pMethods->xUnfetch(p->real, offset, page);
}

static const sqlite3_io_methods fullmap_methods = {
    3, fullmap_close, fullmap_read, fullmap_write, fullmap_truncate, fullmap_sync, fullmap_file_size,
    fullmap_lock, fullmap_unlock, fullmap_check_reserved, fullmap_file_control, fullmap_sector_size,
    fullmap_device, fullmap_shm_map, fullmap_shm_lock, fullmap_shm_barrier, fullmap_shm_unmap,
    fullmap_fetch, fullmap_unfetch,
};

static int fullmap_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    sqlite3_vfs *real_vfs = (sqlite3_vfs *)vfs->pAppData;
    fullmap_file *p = (fullmap_file *)f;
    memset(p, 0, sizeof *p);
    p->real = (sqlite3_file *)&p[1];
    int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
    if (rc != SQLITE_OK || p->real->pMethods == NULL) return rc;
    if ((flags & SQLITE_OPEN_MAIN_DB) && name != NULL) {
        int fd = open(name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
            void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
            if (map != MAP_FAILED) { p->map = map; p->map_size = st.st_size; }
        }
        if (fd >= 0) close(fd);
    }
    p->base.pMethods = &fullmap_methods;
    return SQLITE_OK;
}

int bench_layout_register_fullmap_vfs(void) {
    if (fullmap_vfs.zName != NULL) return 0;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (real == NULL) return -1;
    fullmap_vfs = *real; // every other method is the default's (they do not depend on the sqlite3_vfs passed)
    fullmap_vfs.pNext = NULL;
    fullmap_vfs.zName = "bench-fullmap";
    fullmap_vfs.szOsFile = (int)sizeof(fullmap_file) + real->szOsFile;
    fullmap_vfs.pAppData = real;
    fullmap_vfs.xOpen = fullmap_open;
    return sqlite3_vfs_register(&fullmap_vfs, 0) == SQLITE_OK ? 0 : -1;
}

// MARK: random reads

static int db_status(sqlite3 *db, int op) {
    int current = 0, high = 0;
    sqlite3_db_status(db, op, &current, &high, 0);
    return current;
}

/// One pass of `reads` lookups of random keys; fills time, hits and misses. Returns 0 on success.
static int layout_pass(sqlite3 *db, sqlite3_stmt *select, int layout, int count, int reads, unsigned seed,
                       double *cpu_ns, double *wall_ns, double *hits, double *misses) {
    char key[32];
    long long bytes = 0;
    int hit0 = db_status(db, SQLITE_DBSTATUS_CACHE_HIT), miss0 = db_status(db, SQLITE_DBSTATUS_CACHE_MISS);
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return -1;
    uint64_t c0 = layouts_thread_cpu_ns(), w0 = layouts_wall_ns();
    for (int i = 0; i < reads; i++) {
        seed = seed * 1103515245u + 12345u;
        int n = snprintf(key, sizeof key, "key-%u", (seed >> 4) % (unsigned)count);
        sqlite3_bind_text(select, 1, key, n, SQLITE_TRANSIENT);
        if (layout == BENCH_LAYOUT_HASHED_ROWID) sqlite3_bind_int64(select, 2, bench_layout_key_hash(key, (size_t)n));
        if (sqlite3_step(select) != SQLITE_ROW) {
            fprintf(stderr, "lookup of %s found nothing: %s\n", key, sqlite3_errmsg(db));
            sqlite3_reset(select);
            return -1;
        }
        int size = sqlite3_column_bytes(select, 2);
        void *copy = malloc(size > 0 ? (size_t)size : 1);
        if (copy == NULL) { sqlite3_reset(select); return -1; }
        memcpy(copy, sqlite3_column_blob(select, 2), (size_t)size);
        bytes += size + (((unsigned char *)copy)[size / 2] & 0);
        free(copy);
        sqlite3_reset(select);
        // A fresh read transaction every 1,000 reads, as KVStorage renews its snapshot.
        if (i % 1000 == 999 && sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK) return -1;
    }
    uint64_t c1 = layouts_thread_cpu_ns(), w1 = layouts_wall_ns();
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK || bytes <= 0) return -1;
    *cpu_ns = (double)(c1 - c0) / reads;
    *wall_ns = (double)(w1 - w0) / reads;
    *hits = (double)(db_status(db, SQLITE_DBSTATUS_CACHE_HIT) - hit0) / reads;
    *misses = (double)(db_status(db, SQLITE_DBSTATUS_CACHE_MISS) - miss0) / reads;
    return 0;
}

int bench_layout_random_reads(const char *path, int layout, int count, int reads, const char *pragmas, int full_map,
                              bench_layout_reads *out) {
    int status = -1;
    sqlite3 *db = NULL;
    sqlite3_stmt *select = NULL, *mmap_size = NULL;
    double unused[4];
    memset(out, 0, sizeof *out);
    if (count <= 0 || reads <= 0) return -1;
    if (full_map && bench_layout_register_fullmap_vfs() != 0) return -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, full_map ? "bench-fullmap" : NULL) != SQLITE_OK) goto done;
    if (pragmas != NULL && sqlite3_exec(db, pragmas, NULL, NULL, NULL) != SQLITE_OK) goto done;
    if (sqlite3_prepare_v2(db, "PRAGMA mmap_size", -1, &mmap_size, NULL) != SQLITE_OK || sqlite3_step(mmap_size) != SQLITE_ROW) goto done;
    out->mmap_size = sqlite3_column_int64(mmap_size, 0);
    sqlite3_finalize(mmap_size);
    mmap_size = NULL;
    if (sqlite3_prepare_v3(db, layout_select(layout), -1, SQLITE_PREPARE_PERSISTENT, &select, NULL) != SQLITE_OK) goto done;
    // Warm-up (another seed): steady state, SQLite's page cache as full as it gets.
    if (layout_pass(db, select, layout, count, reads, 777, &unused[0], &unused[1], &unused[2], &unused[3]) != 0) goto done;
    if (layout_pass(db, select, layout, count, reads, 4242, &out->cpu_ns, &out->wall_ns, &out->cache_hits, &out->cache_misses) != 0) goto done;
    // Pages touched per lookup: pages served from a memory map count as neither hit nor miss, so count
    // once more without the map (same keys, untimed).
    if (sqlite3_exec(db, "PRAGMA mmap_size=0", NULL, NULL, NULL) != SQLITE_OK) goto done;
    double hits = 0, misses = 0;
    if (layout_pass(db, select, layout, count, reads, 4242, &unused[0], &unused[1], &hits, &misses) != 0) goto done;
    out->pages_per_lookup = hits + misses;
    status = 0;
done:
    if (status != 0 && db != NULL) fprintf(stderr, "reads on %s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_finalize(mmap_size);
    sqlite3_finalize(select);
    sqlite3_close_v2(db);
    return status;
}

// MARK: floors

static void touch_or_populate(unsigned char *map, size_t length) {
    if (madvise(map, length, MADV_POPULATE_READ) == 0) return;
    volatile unsigned char sink = 0;
    for (size_t o = 0; o < length; o += 4096) sink ^= map[o];
    (void)sink;
}

/// Random page-aligned 2 KB copies out of `base` (length bytes): thread CPU ns per copy.
static double memcpy_pass(const unsigned char *base, size_t length, int reads, int size, unsigned long long seed) {
    unsigned char buffer[4096];
    unsigned long long pages = length / 4096;
    uint64_t c0 = layouts_thread_cpu_ns();
    for (int i = 0; i < reads; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(buffer, base + ((seed >> 33) % pages) * 4096, (size_t)size);
        __asm__ volatile("" : : "r"(buffer) : "memory"); // the copy is used
    }
    return (double)(layouts_thread_cpu_ns() - c0) / reads;
}

int bench_mmap_memcpy_random(const char *path, int reads, int size, double *cpu_ns_per_read) {
    if (reads <= 0 || size <= 0 || size > 4096) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 4096) { close(fd); return -1; }
    size_t length = (size_t)st.st_size;
    unsigned char *map = mmap(NULL, length, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    touch_or_populate(map, length);
    memcpy_pass(map, length, reads, size, 1); // warm-up
    *cpu_ns_per_read = memcpy_pass(map, length, reads, size, 4242);
    munmap(map, length);
    return 0;
}

int bench_anon_memcpy_random(long long length, int huge_pages, int reads, int size, double *cpu_ns_per_read) {
    if (reads <= 0 || size <= 0 || size > 4096 || length < 4096) return -1;
    unsigned char *map = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return -1;
    if (huge_pages) madvise(map, (size_t)length, MADV_HUGEPAGE);
    for (long long o = 0; o < length; o += 4096) map[o] = (unsigned char)o; // fault every page in
    memcpy_pass(map, (size_t)length, reads, size, 1);
    *cpu_ns_per_read = memcpy_pass(map, (size_t)length, reads, size, 4242);
    munmap(map, (size_t)length);
    return 0;
}

// MARK: migration

static void kv_hash_function(sqlite3_context *context, int argc, sqlite3_value **argv) {
    (void)argc;
    const char *key = (const char *)sqlite3_value_text(argv[0]);
    int length = sqlite3_value_bytes(argv[0]);
    if (key == NULL) { sqlite3_result_null(context); return; }
    sqlite3_result_int64(context, bench_layout_key_hash(key, (size_t)length));
}

int bench_layout_migrate_to_hashed(const char *path, double *wall_s, double *cpu_s, long long *bytes_before,
                                   long long *bytes_after) {
    // KVStorage's manifest → the hashed-rowid layout, in place, in one write transaction: the (hash, rowid)
    // pairs are sorted first (16-byte records), then the rows are copied in hash order (appends to the new
    // B-tree, random reads of the old one), the old table dropped (its pages go to the freelist: the file
    // keeps its size until a VACUUM) and the new one renamed.
    static const char *migrate =
        "BEGIN IMMEDIATE;"
        "CREATE TABLE manifest_hashed (id INTEGER PRIMARY KEY, key TEXT NOT NULL, " LAYOUT_COLUMNS ");"
        "INSERT INTO manifest_hashed SELECT s.h, m.key, m.filename, m.size, m.inline_data, m.modification_time,"
        " m.last_access_time, m.extended_data FROM (SELECT kv_hash(key) AS h, rowid AS r FROM manifest ORDER BY h) AS s"
        " JOIN manifest AS m ON m.rowid = s.r;"
        "DROP TABLE manifest;"
        "ALTER TABLE manifest_hashed RENAME TO manifest;"
        "CREATE INDEX manifest_last_access_time ON manifest(last_access_time);"
        "COMMIT;";
    int status = -1;
    sqlite3 *db = NULL;
    struct stat st;
    *bytes_before = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    uint64_t w0 = layouts_wall_ns(), c0 = layouts_thread_cpu_ns();
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) goto done;
    // KVStorage's PRAGMAs; the WAL takes the whole copy (it is checkpointed at the end, as a commit that
    // finds the WAL past the bound does).
    if (sqlite3_exec(db, "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-8192; PRAGMA mmap_size=268435456;", NULL, NULL, NULL) != SQLITE_OK) goto done;
    if (sqlite3_create_function(db, "kv_hash", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, kv_hash_function, NULL, NULL) != SQLITE_OK) goto done;
    if (sqlite3_exec(db, migrate, NULL, NULL, NULL) != SQLITE_OK) { sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); goto done; }
    if (sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK) goto done;
    status = 0;
done:
    if (status != 0 && db != NULL) fprintf(stderr, "migrate %s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_close_v2(db);
    *wall_s = (double)(layouts_wall_ns() - w0) / 1e9;
    *cpu_s = (double)(layouts_thread_cpu_ns() - c0) / 1e9;
    *bytes_after = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    return status;
}
