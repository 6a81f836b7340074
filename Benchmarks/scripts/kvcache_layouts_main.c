// Runner of the manifest-layout experiment (issue 14, "Flat cost at scale"): for each size, each layout is
// populated, read at random under several settings, and deleted; the floors (pread, memcpy from a map) are
// measured on the current layout's file. Build and run with Benchmarks/scripts/kvcache-layouts.sh.
//
//   kvcache-layouts --dir DIR [--quick] [--sizes 1000,100000,1000000] [--reads 20000] [--reps 2] [--only SUBSTRING]
#include "bench_harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct { const char *name; const char *pragmas; int full_map; } config;
typedef struct { const char *name; int layout; int page_size; const config *configs; int config_count; } store;

#define BASE "PRAGMA cache_size=-8192; PRAGMA mmap_size=268435456;"
#define MMAP_MAX "PRAGMA cache_size=-8192; PRAGMA mmap_size=1099511627776;"

static const config current_configs[] = {
    {"a. baseline: 8 MB cache, 256 MB mmap", BASE, 0},
    {"b. mmap_size max", MMAP_MAX, 0},
    {"b. cache 32 MB", "PRAGMA cache_size=-32768; PRAGMA mmap_size=268435456;", 0},
    {"b. cache 128 MB", "PRAGMA cache_size=-131072; PRAGMA mmap_size=268435456;", 0},
    {"b. mmap max + cache 128 MB", "PRAGMA cache_size=-131072; PRAGMA mmap_size=1099511627776;", 0},
    {"   no mmap, 8 MB cache", "PRAGMA cache_size=-8192; PRAGMA mmap_size=0;", 0},
    {"f. whole file mapped (VFS shim)", BASE, 1},
};
static const config other_configs[] = {
    {"baseline PRAGMAs", BASE, 0},
    {"mmap_size max", MMAP_MAX, 0},
    {"whole file mapped (VFS shim)", BASE, 1},
};
#define N_CURRENT (int)(sizeof current_configs / sizeof current_configs[0])
#define N_OTHER (int)(sizeof other_configs / sizeof other_configs[0])

static const store stores[] = {
    {"current (rowid + key index), 4 KB", BENCH_LAYOUT_CURRENT, 4096, current_configs, N_CURRENT},
    {"WITHOUT ROWID, 4 KB", BENCH_LAYOUT_WITHOUT_ROWID, 4096, other_configs, N_OTHER},
    {"WITHOUT ROWID, 8 KB", BENCH_LAYOUT_WITHOUT_ROWID, 8192, other_configs, N_OTHER},
    {"WITHOUT ROWID, 16 KB", BENCH_LAYOUT_WITHOUT_ROWID, 16384, other_configs, N_OTHER},
    {"hashed rowid, 4 KB", BENCH_LAYOUT_HASHED_ROWID, 4096, other_configs, N_OTHER},
    {"hashed rowid, 8 KB", BENCH_LAYOUT_HASHED_ROWID, 8192, other_configs, N_OTHER},
    {"hashed rowid, 16 KB", BENCH_LAYOUT_HASHED_ROWID, 16384, other_configs, N_OTHER},
};
#define N_STORES (int)(sizeof stores / sizeof stores[0])
#define N_FLOORS 4
static const char *floor_names[N_FLOORS] = {
    "floor: pread 2 KB of the current file", "floor: memcpy 2 KB from the mapped, pre-faulted current file",
    "floor: memcpy 2 KB, anonymous memory of the file's size, 4 KB pages",
    "floor: memcpy 2 KB, anonymous memory of the file's size, MADV_HUGEPAGE",
};

#define MAX_SIZES 4
#define MAX_REPS 4
#define MAX_CONFIGS 8
// results[store][config][size][rep]; floors in floor_results[floor][size][rep]; NaN-free: 0 = not measured.
static bench_layout_reads results[N_STORES][MAX_CONFIGS][MAX_SIZES][MAX_REPS];
static double floor_results[N_FLOORS][MAX_SIZES][MAX_REPS];
static double file_mb[N_STORES][MAX_SIZES];

static const char *loadavg(void) {
    static char text[64];
    FILE *f = fopen("/proc/loadavg", "r");
    text[0] = 0;
    if (f != NULL) {
        if (fgets(text, sizeof text, f) == NULL) text[0] = 0;
        fclose(f);
    }
    char *space = text;
    for (int fields = 0; *space && fields < 3; space++) if (*space == ' ') fields++;
    if (space > text) space[-1] = 0; // keep the three averages
    return text;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void remove_store(const char *path) {
    char other[4200];
    unlink(path);
    snprintf(other, sizeof other, "%s-wal", path);
    unlink(other);
    snprintf(other, sizeof other, "%s-shm", path);
    unlink(other);
}

static const char *label(int count, char *buffer, size_t size) {
    if (count >= 1000000 && count % 1000000 == 0) snprintf(buffer, size, "%dM", count / 1000000);
    else if (count >= 1000 && count % 1000 == 0) snprintf(buffer, size, "%dk", count / 1000);
    else snprintf(buffer, size, "%d", count);
    return buffer;
}

static double mean_cpu(const bench_layout_reads *r, int reps) {
    double sum = 0;
    for (int i = 0; i < reps; i++) sum += r[i].cpu_ns;
    return sum / reps;
}

static double mean(const double *v, int reps) {
    double sum = 0;
    for (int i = 0; i < reps; i++) sum += v[i];
    return sum / reps;
}

int main(int argc, char **argv) {
    const char *dir = NULL, *only = NULL;
    int sizes[MAX_SIZES] = {1000, 100000, 1000000}, n_sizes = 3, reads = 20000, reps = 2, migrate_max = 100000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--quick")) { sizes[0] = 1000; sizes[1] = 10000; sizes[2] = 100000; n_sizes = 3; }
        else if (!strcmp(argv[i], "--reads") && i + 1 < argc) reads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--migrate-max") && i + 1 < argc) migrate_max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            n_sizes = 0;
            for (char *s = argv[++i]; *s && n_sizes < MAX_SIZES; ) {
                sizes[n_sizes++] = (int)strtol(s, &s, 10);
                if (*s == ',') s++;
            }
        } else {
            fprintf(stderr, "usage: %s --dir DIR [--quick] [--sizes a,b,c] [--reads N] [--reps N] [--only SUBSTRING] [--migrate-max N]\n", argv[0]);
            return 2;
        }
    }
    if (dir == NULL || reads <= 0 || reps < 1 || reps > MAX_REPS || n_sizes < 1) {
        fprintf(stderr, "kvcache-layouts: --dir is required; 1 ≤ reps ≤ %d\n", MAX_REPS);
        return 2;
    }
    mkdir(dir, 0755);
    printf("kvcache-layouts: %d random 2 KB reads per figure (thread CPU time), %d repetitions interleaved; load average at start %s\n",
           reads, reps, loadavg());
    char path[4096], l[16];
    snprintf(path, sizeof path, "%s/manifest.sqlite", dir);
    long long first_time = (long long)time(NULL) * 1000000 - 10000000;
    for (int z = 0; z < n_sizes; z++) {
        int count = sizes[z];
        for (int s = 0; s < N_STORES; s++) {
            const store *st = &stores[s];
            if (only != NULL && strstr(st->name, only) == NULL) continue;
            remove_store(path);
            double t0 = now_s();
            if (bench_layout_populate(path, st->layout, st->page_size, count, 2048, first_time) != 0) {
                fprintf(stderr, "populate %s at %d failed\n", st->name, count);
                remove_store(path);
                return 1;
            }
            struct stat sb;
            file_mb[s][z] = stat(path, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0;
            printf("%s %s: populated in %.1f s, %.0f MB (load %s)\n", label(count, l, sizeof l), st->name, now_s() - t0,
                   file_mb[s][z], loadavg());
            fflush(stdout);
            for (int rep = 0; rep < reps; rep++) {
                for (int c = 0; c < st->config_count; c++) {
                    bench_layout_reads *r = &results[s][c][z][rep];
                    if (bench_layout_random_reads(path, st->layout, count, reads, st->configs[c].pragmas, st->configs[c].full_map, r) != 0) {
                        fprintf(stderr, "reads %s / %s at %d failed\n", st->name, st->configs[c].name, count);
                        remove_store(path);
                        return 1;
                    }
                    printf("  %s | %-38s | rep %d: %6.2f µs CPU (wall %6.2f) | pages/lookup %.2f, cache hits %.2f, misses %.2f | mmap_size %lld | load %s\n",
                           st->name, st->configs[c].name, rep + 1, r->cpu_ns / 1e3, r->wall_ns / 1e3, r->pages_per_lookup,
                           r->cache_hits, r->cache_misses, r->mmap_size, loadavg());
                    fflush(stdout);
                }
                if (st->layout == BENCH_LAYOUT_CURRENT && st->page_size == 4096) {
                    double v = 0;
                    long long length = (long long)(file_mb[s][z] * 1048576.0);
                    int ok = bench_pread_random(path, reads, 2048, &v) == 0;
                    floor_results[0][z][rep] = ok ? v : 0;
                    ok = ok && bench_mmap_memcpy_random(path, reads, 2048, &v) == 0;
                    floor_results[1][z][rep] = ok ? v : 0;
                    ok = ok && bench_anon_memcpy_random(length, 0, reads, 2048, &v) == 0;
                    floor_results[2][z][rep] = ok ? v : 0;
                    ok = ok && bench_anon_memcpy_random(length, 1, reads, 2048, &v) == 0;
                    floor_results[3][z][rep] = ok ? v : 0;
                    if (!ok) { fprintf(stderr, "floors at %d failed\n", count); remove_store(path); return 1; }
                    for (int f = 0; f < N_FLOORS; f++)
                        printf("  %-62s | rep %d: %6.3f µs CPU | load %s\n", floor_names[f], rep + 1, floor_results[f][z][rep] / 1e3, loadavg());
                    fflush(stdout);
                }
            }
            if (st->layout == BENCH_LAYOUT_CURRENT && st->page_size == 4096 && count <= migrate_max) {
                // The schema change at first open, in place (peaks at about 3× the store on disk: the copy in
                // the WAL, then in the file beside the old table's free pages).
                double wall = 0, cpu = 0;
                long long before = 0, after = 0;
                bench_layout_reads r;
                if (bench_layout_migrate_to_hashed(path, &wall, &cpu, &before, &after) != 0
                    || bench_layout_random_reads(path, BENCH_LAYOUT_HASHED_ROWID, count, reads, BASE, 0, &r) != 0) {
                    fprintf(stderr, "migration at %d failed\n", count);
                    remove_store(path);
                    return 1;
                }
                printf("  migration current → hashed rowid at %s: %.2f s wall, %.2f s CPU, file %.0f → %.0f MB; then a read %.2f µs CPU, %.2f pages/lookup (load %s)\n",
                       label(count, l, sizeof l), wall, cpu, before / 1048576.0, after / 1048576.0, r.cpu_ns / 1e3, r.pages_per_lookup, loadavg());
                fflush(stdout);
            }
            remove_store(path);
        }
    }

    // The table: layout × size, each figure "rep 1 / rep 2 …" in µs, growth = mean at the largest / mean at the smallest.
    printf("\n| layout | settings |");
    for (int z = 0; z < n_sizes; z++) printf(" %s |", label(sizes[z], l, sizeof l));
    printf(" growth %s/%s | pages per lookup at %s (misses) | file at %s |\n|---|---|", label(sizes[n_sizes - 1], l, sizeof l),
           label(sizes[0], (char[16]){0}, 16), label(sizes[n_sizes - 1], (char[16]){0}, 16), label(sizes[n_sizes - 1], (char[16]){0}, 16));
    for (int z = 0; z < n_sizes; z++) printf("---|");
    printf("---|---|---|\n");
    for (int s = 0; s < N_STORES; s++) {
        if (only != NULL && strstr(stores[s].name, only) == NULL) continue;
        for (int c = 0; c < stores[s].config_count; c++) {
            printf("| %s | %s |", stores[s].name, stores[s].configs[c].name);
            for (int z = 0; z < n_sizes; z++) {
                printf(" ");
                for (int rep = 0; rep < reps; rep++) printf("%s%.2f", rep ? " / " : "", results[s][c][z][rep].cpu_ns / 1e3);
                printf(" µs |");
            }
            const bench_layout_reads *big = results[s][c][n_sizes - 1];
            double growth = mean_cpu(big, reps) / mean_cpu(results[s][c][0], reps);
            printf(" %.2f× | %.2f (%.2f) | %.0f MB |\n", growth, big[0].pages_per_lookup, big[0].cache_misses, file_mb[s][n_sizes - 1]);
        }
    }
    if (only == NULL || strstr(stores[0].name, only) != NULL) {
        for (int f = 0; f < N_FLOORS; f++) {
            printf("| %s | |", floor_names[f]);
            for (int z = 0; z < n_sizes; z++) {
                printf(" ");
                for (int rep = 0; rep < reps; rep++) printf("%s%.3f", rep ? " / " : "", floor_results[f][z][rep] / 1e3);
                printf(" µs |");
            }
            printf(" %.2f× | | |\n", mean(floor_results[f][n_sizes - 1], reps) / mean(floor_results[f][0], reps));
        }
    }
    printf("\nload average at the end: %s\n", loadavg());
    return 0;
}
