/* Corpus replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over every file named on the
 * command line, or every regular file in the directories named (not recursive, in name order).
 * Linked with a target instead of libFuzzer, it lets ordinary builds (gcc, no sanitizer needed)
 * replay the seed corpora in ctest. A failed check in the target aborts; the driver itself
 * fails when an argument cannot be read or when no input was found at all. */
#include <dirent.h>
#include <errno.h>
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    unsigned long count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        int rc = S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i], &count);
        if (rc) return rc;
    }
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    fprintf(stderr, "replay: %lu inputs ran cleanly\n", count);
    return 0;
}
