/* BLAKE3 throughput: wk_blake3 at several input sizes, and beside it, in the same run, the b3sum
 * tool (single thread) on a large temporary file.
 *
 * wirekit numbers are in-memory hashing (median of 7 measurements, each long enough to time).
 * b3sum numbers are whole-process wall time of `b3sum --num-threads 1 --no-names FILE` (median of
 * 5): process start-up and reading the file (from the page cache) are included, nothing is
 * subtracted. For a like-for-like row, wirekit also hashes the same file read with 64 KiB freads.
 * MB/s means 10^6 bytes per second.
 *
 * Usage: blake3_bench [--quick] [--file-mib N]   (default 256 MiB file; --quick: fewer sizes). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <wirekit/common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Test hook in src/common/blake3.c: caps the kernel level, returns the level that will run. */
int wk_blake3__set_backend(int level);

#define REPEATS 7
#define B3SUM_REPEATS 5

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fill(uint8_t *d, size_t n)
{
    uint64_t x = 0x243F6A8885A308D3u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        d[i] = (uint8_t)(x >> 24);
    }
}

static volatile uint8_t sink;

/* Median MB/s of wk_blake3 over `size` bytes; each measurement lasts at least ~40 ms. */
static double bench_size(const uint8_t *data, size_t size)
{
    uint8_t out[WK_BLAKE3_OUT_LEN];
    size_t iters = 1;
    for (;;) { /* calibrate */
        double t0 = now_sec();
        for (size_t i = 0; i < iters; i++) wk_blake3(data, size, out);
        double dt = now_sec() - t0;
        if (dt > 0.04 || iters > ((size_t)1 << 30)) break;
        iters *= 2;
    }
    double rates[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_sec();
        for (size_t i = 0; i < iters; i++) wk_blake3(data, size, out);
        double dt = now_sec() - t0;
        rates[r] = (double)size * (double)iters / dt / 1e6;
        sink ^= out[0];
    }
    return median(rates, REPEATS);
}

/* Hashes the file with 64 KiB freads; returns seconds, hex digest into hex. */
static double hash_file(const char *path, char hex[2 * WK_BLAKE3_OUT_LEN + 1])
{
    static uint8_t buf[65536];
    double t0 = now_sec();
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    wk_blake3_hasher h;
    wk_blake3_init(&h);
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) wk_blake3_update(&h, buf, got);
    fclose(f);
    uint8_t out[WK_BLAKE3_OUT_LEN];
    wk_blake3_finalize(&h, out, sizeof out);
    double dt = now_sec() - t0;
    wk_hex_encode(out, sizeof out, hex);
    return dt;
}

/* Runs b3sum once; returns wall seconds (or -1), its first output line into line. */
static double run_b3sum(const char *path, char *line, size_t cap)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "b3sum --num-threads 1 --no-names '%s' 2>/dev/null", path);
    double t0 = now_sec();
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    line[0] = '\0';
    if (!fgets(line, (int)cap, p)) line[0] = '\0';
    char rest[256];
    while (fgets(rest, sizeof rest, p)) {}
    int st = pclose(p);
    double dt = now_sec() - t0;
    line[strcspn(line, "\n")] = '\0';
    return st == 0 ? dt : -1;
}

static const char *level_name(int level)
{
    static const char *const names[] = {"portable", "SSE4.1 x4", "AVX2 x8", "AVX-512 x16"};
    return level >= 0 && level <= 3 ? names[level] : "?";
}

int main(int argc, char **argv)
{
    size_t file_mib = 256;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--file-mib") == 0 && i + 1 < argc) file_mib = strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: blake3_bench [--quick] [--file-mib N]\n");
            return 1;
        }
    }
    if (file_mib == 0) file_mib = 1;

    static const size_t sizes[] = {64, 1024, 16 * 1024, 1024 * 1024, 64 * 1024 * 1024};
    size_t nsizes = quick ? 4 : sizeof sizes / sizeof sizes[0];
    size_t file_len = file_mib << 20;
    size_t max = file_len > sizes[nsizes - 1] ? file_len : sizes[nsizes - 1];
    uint8_t *data = malloc(max);
    if (!data) {
        fprintf(stderr, "cannot allocate %zu bytes\n", max);
        return 1;
    }
    fill(data, max);

    int best = wk_blake3__set_backend(3);
    printf("BLAKE3 throughput, MB/s = 10^6 bytes/s, median of %d (wirekit) / %d (b3sum) runs\n",
           REPEATS, B3SUM_REPEATS);
    printf("wirekit kernel: %s (runtime-selected); portable column: same code forced to the "
           "portable kernel\n\n", level_name(best));
    printf("%-12s %14s %14s %14s\n", "size", "wirekit MB/s", "portable MB/s", "b3sum MB/s");
    for (size_t i = 0; i < nsizes; i++) {
        wk_blake3__set_backend(3);
        double fast = bench_size(data, sizes[i]);
        wk_blake3__set_backend(0);
        double port = bench_size(data, sizes[i]);
        wk_blake3__set_backend(3);
        char label[32];
        if (sizes[i] >= 1024 * 1024) snprintf(label, sizeof label, "%zu MiB", sizes[i] >> 20);
        else if (sizes[i] >= 1024) snprintf(label, sizeof label, "%zu KiB", sizes[i] >> 10);
        else snprintf(label, sizeof label, "%zu B", sizes[i]);
        printf("%-12s %14.0f %14.0f %14s\n", label, fast, port, "-");
        fflush(stdout);
    }

    /* The large file: wirekit in memory, wirekit through 64 KiB freads, b3sum single thread. */
    char path[] = "/tmp/wk_blake3_bench_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        free(data);
        return 1;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f || fwrite(data, 1, file_len, f) != file_len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        unlink(path);
        free(data);
        return 1;
    }
    uint8_t digest[WK_BLAKE3_OUT_LEN];
    char want[2 * WK_BLAKE3_OUT_LEN + 1];
    wk_blake3(data, file_len, digest);
    wk_hex_encode(digest, sizeof digest, want);

    double mem_rates[REPEATS], file_rates[REPEATS], b3_rates[B3SUM_REPEATS];
    int mismatch = 0, b3sum_ok = 1;
    char line[256], got[2 * WK_BLAKE3_OUT_LEN + 1];
    run_b3sum(path, line, sizeof line); /* warm the page cache and the binary */
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_sec();
        wk_blake3(data, file_len, digest);
        mem_rates[r] = (double)file_len / (now_sec() - t0) / 1e6;
        double dt = hash_file(path, got);
        file_rates[r] = dt > 0 ? (double)file_len / dt / 1e6 : 0;
        if (strcmp(got, want) != 0) mismatch = 1;
    }
    for (int r = 0; r < B3SUM_REPEATS; r++) {
        double dt = run_b3sum(path, line, sizeof line);
        if (dt <= 0) { b3sum_ok = 0; break; }
        b3_rates[r] = (double)file_len / dt / 1e6;
        if (strcmp(line, want) != 0) mismatch = 1;
    }
    unlink(path);

    char label[32];
    snprintf(label, sizeof label, "%zu MiB file", file_mib);
    char b3[32] = "n/a";
    if (b3sum_ok) snprintf(b3, sizeof b3, "%.0f", median(b3_rates, B3SUM_REPEATS));
    printf("%-12s %14.0f %14s %14s\n", label, median(mem_rates, REPEATS), "-", b3);
    printf("\nOn the %zu MiB file, single thread on both sides: wirekit in memory %.0f MB/s, wirekit\n"
           "reading the file with 64 KiB freads %.0f MB/s, b3sum --num-threads 1 %s MB/s (whole\n"
           "process wall time: start-up and its mmap of the cached file included, nothing "
           "subtracted).\n",
           file_mib, median(mem_rates, REPEATS), median(file_rates, REPEATS), b3);
    if (mismatch) printf("WARNING: digests differ between wirekit and b3sum/file path!\n");
    free(data);
    return mismatch ? 1 : 0;
}
