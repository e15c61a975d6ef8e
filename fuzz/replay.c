/* Corpus replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over every file named on the
 * command line, or every regular file in the directories named (not recursive, in name order).
 * Linked with a target instead of libFuzzer, it lets ordinary builds (gcc, no sanitizer needed)
 * replay the seed corpora in ctest. A failed check in the target aborts; the driver itself
 * fails when an argument cannot be read or when no input was found at all.
 *
 *   replay [--alloc-noise] [--rounds N] FILE_OR_DIR...
 * --alloc-noise runs a second thread that allocates and frees without pause while the inputs
 * run, so a target's allocation checks (fuzz/alloc_hook.h) prove they count only the measured
 * call's own thread (libFuzzer's RSS thread allocating at its start once failed such a check);
 * --rounds N runs the whole list N times (default 1). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, unsigned long *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return 1;
    }
    for (;;) {
        if (n == cap) {
            uint8_t *q = realloc(buf, cap * 2);
            if (!q) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = q;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return 1;
    }
    /* an exact-size copy, so ASan sees reads past the end of the input */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    if (n) memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    (*count)++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned long *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        size_t len = strlen(dir) + 1 + strlen(de->d_name) + 1;
        char *path = malloc(len);
        if (!path) { rc = 1; break; }
        snprintf(path, len, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **q = realloc(names, cap * sizeof *names);
            if (!q) { free(path); rc = 1; break; }
            names = q;
        }
        names[n++] = path;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) rc = run_file(names[i], count);
        free(names[i]);
    }
    free(names);
    return rc;
}

static atomic_bool noise_stop;
static atomic_ulong noise_allocs;

/* The --alloc-noise thread: allocates and frees until told to stop. */
static void *noise(void *arg)
{
    (void)arg;
    unsigned long n = 0;
    while (!atomic_load_explicit(&noise_stop, memory_order_relaxed)) {
        void *volatile p = malloc(16 + (n & 255));
        free(p);
        n++;
    }
    atomic_store(&noise_allocs, n);
    return NULL;
}

int main(int argc, char **argv)
{
    int first = 1;
    unsigned long rounds = 1;
    bool with_noise = false;
    for (; first < argc; first++) {
        if (strcmp(argv[first], "--alloc-noise") == 0) {
            with_noise = true;
        } else if (strcmp(argv[first], "--rounds") == 0 && first + 1 < argc) {
            rounds = strtoul(argv[++first], NULL, 10);
            if (rounds == 0 || rounds > 1000) {
                fprintf(stderr, "replay: --rounds takes 1..1000\n");
                return 2;
            }
        } else {
            break;
        }
    }
    if (first >= argc) {
        fprintf(stderr, "usage: %s [--alloc-noise] [--rounds N] FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    pthread_t th;
    if (with_noise && pthread_create(&th, NULL, noise, NULL) != 0) {
        fprintf(stderr, "replay: cannot start the noise thread\n");
        return 1;
    }
    unsigned long count = 0;
    int rc = 0;
    for (unsigned long r = 0; r < rounds && rc == 0; r++) {
        for (int i = first; i < argc && rc == 0; i++) {
            struct stat st;
            if (stat(argv[i], &st) != 0) {
                fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
                rc = 1;
                break;
            }
            rc = S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i], &count);
        }
    }
    if (with_noise) {
        atomic_store(&noise_stop, true);
        pthread_join(th, NULL);
        fprintf(stderr, "replay: the noise thread allocated %lu times\n",
                atomic_load(&noise_allocs));
    }
    if (rc) return rc;
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    fprintf(stderr, "replay: %lu inputs ran cleanly\n", count);
    return 0;
}
