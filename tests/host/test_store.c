/* The content-addressed Blob store: put/get/has/list round trips (empty, 1 byte, 1 MiB, 32 MiB
 * through the streaming writer, 2,000 small Blobs), hashes against the H3 Blob record, refusals
 * that store nothing (hash mismatch, length mismatch, abort, over the cap), stale temporaries,
 * non-Blob names, corruption on disk and its repair by a later put. Works in a mkdtemp directory
 * under /tmp, removed at the end. */
#include "wk_test.h"
#include <wirekit/host.h>
#include <wirekit/iltp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAP WK_ILTP_BLOB_DATA_CAP

static char g_root[64];      /* the mkdtemp directory */
static char g_dir[128];      /* the main store: ROOT/s */
static char g_blobs[160];    /* ROOT/s/blobs */
static const char *N0 = "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO"; /* the empty Blob */

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)(x >> 24);
    }
}

static void b64(const uint8_t h[32], char out[44])
{
    wk_b64a_encode(h, 32, out);
    out[43] = 0;
}

static const char *blob_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_blobs, name);
    return path;
}

/* Entries in ROOT/s/blobs, temporaries included. */
static size_t count_entries(void)
{
    DIR *d = opendir(g_blobs);
    if (!d) return (size_t)-1;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static bool exists(const char *name)
{
    struct stat st;
    return lstat(blob_path(name), &st) == 0;
}

static bool write_file(const char *name, const void *p, size_t n)
{
    int fd = open(blob_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    bool ok = write(fd, p, n) == (ssize_t)n;
    return close(fd) == 0 && ok;
}

static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* The hash from the glyph line of wk_iltp_blob_encode's record (what `wirekit iltp blob` writes). */
static bool record_hash_text(const uint8_t *data, size_t len, char out[44])
{
    size_t need = wk_iltp_blob_record_size(len);
    uint8_t *rec = malloc(need);
    wk_out o = {rec, need, 0};
    wk_error e;
    bool ok = rec && wk_iltp_blob_encode(data, len, &o, &e) == WK_DONE && need >= 55 &&
              memcmp(rec, WK_ILTP_RECORD_LEAD "B.", 8) == 0 && memcmp(rec + 51, ".H3\n", 4) == 0;
    if (ok) {
        memcpy(out, rec + 8, 43);
        out[43] = 0;
    }
    free(rec);
    return ok;
}

/* put, has, get, idempotent put, file on disk, hash against the record, for one data string. */
static void roundtrip(wk_store *s, const uint8_t *data, size_t len)
{
    wk_error e;
    uint8_t h[32], want[32], h2[32];
    bool existed = true;
    wk_iltp_blob_hash(data, len, want);
    REQUIRE(wk_store_put(s, data, len, NULL, h, &existed, &e) == WK_OK);
    CHECK_MEM(h, want, 32);
    CHECK(!existed);
    char name[44], rec[44];
    b64(h, name);
    CHECK(record_hash_text(data, len, rec) && strcmp(rec, name) == 0);
    CHECK(wk_store_has(s, h));
    uint8_t *got = NULL;
    size_t got_len = 99;
    REQUIRE(wk_store_get(s, h, &got, &got_len, &e) == WK_OK);
    CHECK(got != NULL && got_len == len && (len == 0 || memcmp(got, data, len) == 0));
    free(got);
    /* the file is the raw data under the B64A name, without write permission */
    size_t fl = 0;
    unsigned char *f = wk_test_read_file(blob_path(name), &fl);
    CHECK(f && fl == len && (len == 0 || memcmp(f, data, len) == 0));
    free(f);
    struct stat st;
    CHECK(stat(blob_path(name), &st) == 0 && (st.st_mode & 0222) == 0);
    /* again: nothing written, same hash; with the expected hash too */
    size_t before = count_entries();
    REQUIRE(wk_store_put(s, data, len, want, h2, &existed, &e) == WK_OK);
    CHECK(existed);
    CHECK_MEM(h2, want, 32);
    CHECK(count_entries() == before);
}

static void test_open_and_codes(void)
{
    wk_error e;
    char missing[200];
    snprintf(missing, sizeof missing, "%s/missing", g_root);
    CHECK(wk_store_open(missing, false, &e) == NULL);
    CHECK(e.code == WK_ERR_HOST_IO && e.category == WK_CAT_INTEGRATION);
    CHECK(strstr(e.msg, "No such file") != NULL);
    char deep[220];
    snprintf(deep, sizeof deep, "%s/missing/deeper", g_root);
    CHECK(wk_store_open(deep, true, &e) == NULL && e.code == WK_ERR_HOST_IO);
    CHECK(wk_store_open("", true, &e) == NULL && e.code == WK_ERR_ARG);

    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    wk_store_close(s);
    s = wk_store_open(g_dir, true, &e); /* existing: fine */
    REQUIRE(s);
    wk_store_close(s);
    s = wk_store_open(g_dir, false, &e);
    REQUIRE(s);
    CHECK(count_entries() == 0);
    uint8_t (*hs)[32] = (void *)1;
    size_t n = 9;
    CHECK(wk_store_list(s, &hs, &n, &e) == WK_OK && n == 0 && hs == NULL);
    wk_store_close(s);
    wk_store_close(NULL);

    CHECK(strcmp(wk_error_name(WK_ERR_HOST_IO), "HOST_ERR_IO") == 0);
    CHECK(strcmp(wk_error_name(WK_ERR_HOST_STORE_CORRUPT), "HOST_ERR_STORE_CORRUPT") == 0);
    CHECK(strcmp(wk_error_name(WK_ERR_HOST_NOT_FOUND), "HOST_ERR_NOT_FOUND") == 0);
    CHECK(strcmp(wk_error_name(WK_ERR_HOST_HASH_MISMATCH), "HOST_ERR_HASH_MISMATCH") == 0);
    CHECK(wk_code_category(WK_ERR_HOST_HASH_MISMATCH) == WK_CAT_PEER_PROTOCOL);
    CHECK(wk_code_category(WK_ERR_HOST_STORE_CORRUPT) == WK_CAT_INTEGRATION);
}

static void test_roundtrips(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    /* empty Blob: the pinned hash from the Lace-065 dictionary */
    roundtrip(s, NULL, 0);
    uint8_t h[32];
    size_t n;
    REQUIRE(wk_b64a_decode(N0, 43, h, 32, &n, &e) == WK_OK);
    CHECK(wk_store_has(s, h));
    CHECK(exists(N0));
    uint8_t one = 'x';
    roundtrip(s, &one, 1);
    size_t mib = (size_t)1 << 20;
    uint8_t *big = malloc(mib);
    REQUIRE(big);
    fill(big, mib, 1);
    roundtrip(s, big, mib);
    /* the store works from a writer too: same hash as put, split at every byte */
    wk_store_writer *w = wk_store_writer_begin(s, 300, &e);
    REQUIRE(w);
    for (size_t i = 0; i < 300; i++) CHECK(wk_store_writer_write(w, big + i, 1, &e) == WK_OK);
    CHECK(wk_store_writer_write(w, NULL, 0, &e) == WK_OK);
    uint8_t wh[32], ph[32];
    REQUIRE(wk_store_writer_commit(w, NULL, wh, &e) == WK_OK);
    wk_iltp_blob_hash(big, 300, ph);
    CHECK_MEM(wh, ph, 32);
    bool existed = false;
    CHECK(wk_store_put(s, big, 300, NULL, NULL, &existed, &e) == WK_OK && existed);
    /* an empty writer gives the empty Blob */
    w = wk_store_writer_begin(s, 0, &e);
    REQUIRE(w);
    REQUIRE(wk_store_writer_commit(w, h, wh, &e) == WK_OK);
    CHECK_MEM(wh, h, 32);
    /* get of a hash not stored */
    uint8_t absent[32] = {0};
    uint8_t *d = (uint8_t *)1;
    size_t dl = 7;
    CHECK(!wk_store_has(s, absent));
    CHECK(wk_store_get(s, absent, &d, &dl, &e) == WK_ERR_HOST_NOT_FOUND && d == NULL && dl == 0);
    CHECK(e.category == WK_CAT_USAGE);
    free(big);
    wk_store_close(s);
}

static void test_cap_and_32mib(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    uint8_t *big = malloc(CAP + 1);
    REQUIRE(big);
    fill(big, CAP + 1, 32);
    size_t before = count_entries();
    CHECK(wk_store_put(s, big, CAP + 1, NULL, NULL, NULL, &e) == WK_ERR_ARG && strstr(e.msg, "ILTP_ERR_BLOB_TOO_LARGE"));
    CHECK(e.category == WK_CAT_INTEGRATION);
    CHECK(wk_store_writer_begin(s, (uint64_t)CAP + 1, &e) == NULL && e.code == WK_ERR_ARG &&
          strstr(e.msg, "ILTP_ERR_BLOB_TOO_LARGE"));
    CHECK(count_entries() == before);

    /* exactly 32 MiB through the writer, in uneven pieces, with the expected hash */
    uint8_t want[32], got[32];
    wk_iltp_blob_hash(big, CAP, want);
    wk_store_writer *w = wk_store_writer_begin(s, CAP, &e);
    REQUIRE(w);
    CHECK(count_entries() == before + 1); /* the temporary */
    for (size_t off = 0; off < CAP;) {
        size_t n = CAP - off < 100003 ? CAP - off : 100003;
        if (wk_store_writer_write(w, big + off, n, &e) != WK_OK) { CHECK(0); break; }
        off += n;
    }
    REQUIRE(wk_store_writer_commit(w, want, got, &e) == WK_OK);
    CHECK_MEM(got, want, 32);
    CHECK(count_entries() == before + 1); /* the Blob, no temporary */
    uint8_t *d = NULL;
    size_t dl = 0;
    REQUIRE(wk_store_get(s, want, &d, &dl, &e) == WK_OK);
    CHECK(dl == CAP && memcmp(d, big, CAP) == 0);
    free(d);
    char name[44], rec[44];
    b64(want, name);
    CHECK(record_hash_text(big, CAP, rec) && strcmp(rec, name) == 0);
    bool existed = false;
    CHECK(wk_store_put(s, big, CAP, want, NULL, &existed, &e) == WK_OK && existed);
    free(big);
    wk_store_close(s);
}

static void test_refusals(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    const uint8_t data[] = "refused data";
    size_t len = sizeof data - 1;
    uint8_t real[32], wrong[32];
    wk_iltp_blob_hash(data, len, real);
    memcpy(wrong, real, 32);
    wrong[31] ^= 1;
    size_t before = count_entries();

    /* put with a wrong expected hash */
    uint8_t out[32] = {0};
    bool existed = true;
    CHECK(wk_store_put(s, data, len, wrong, out, &existed, &e) == WK_ERR_HOST_HASH_MISMATCH);
    CHECK(e.category == WK_CAT_PEER_PROTOCOL && !existed);
    CHECK(!wk_store_has(s, real) && !wk_store_has(s, wrong));
    CHECK(count_entries() == before);

    /* writer: wrong hash at commit */
    wk_store_writer *w = wk_store_writer_begin(s, len, &e);
    REQUIRE(w);
    CHECK(wk_store_writer_write(w, data, len, &e) == WK_OK);
    CHECK(wk_store_writer_commit(w, wrong, out, &e) == WK_ERR_HOST_HASH_MISMATCH);
    CHECK(count_entries() == before && !wk_store_has(s, real));

    /* writer: abort after part of the data */
    w = wk_store_writer_begin(s, len, &e);
    REQUIRE(w);
    CHECK(wk_store_writer_write(w, data, 5, &e) == WK_OK);
    CHECK(count_entries() == before + 1);
    uint8_t (*hs)[32] = NULL;
    size_t n = 0;
    CHECK(wk_store_list(s, &hs, &n, &e) == WK_OK && n == before); /* temporary not listed */
    free(hs);
    wk_store_writer_abort(w);
    CHECK(count_entries() == before);
    wk_store_writer_abort(NULL);

    /* writer: fewer bytes than declared */
    w = wk_store_writer_begin(s, len, &e);
    REQUIRE(w);
    CHECK(wk_store_writer_write(w, data, len - 1, &e) == WK_OK);
    CHECK(wk_store_writer_commit(w, NULL, out, &e) == WK_ERR_ARG);
    CHECK(count_entries() == before && !wk_store_has(s, real));

    /* writer: more bytes than declared; then it is failed */
    w = wk_store_writer_begin(s, len, &e);
    REQUIRE(w);
    CHECK(wk_store_writer_write(w, data, len - 2, &e) == WK_OK);
    CHECK(wk_store_writer_write(w, data, 3, &e) == WK_ERR_ARG);
    CHECK(count_entries() == before);
    CHECK(wk_store_writer_write(w, data, 1, &e) == WK_ERR_STATE);
    CHECK(wk_store_writer_commit(w, NULL, out, &e) == WK_ERR_STATE);
    CHECK(count_entries() == before && !wk_store_has(s, real));

    /* a failed writer may also be aborted */
    w = wk_store_writer_begin(s, 1, &e);
    REQUIRE(w);
    CHECK(wk_store_writer_write(w, data, 2, &e) == WK_ERR_ARG);
    wk_store_writer_abort(w);
    CHECK(count_entries() == before);

    /* the same data with the right hash is stored */
    CHECK(wk_store_put(s, data, len, real, out, &existed, &e) == WK_OK && !existed);
    CHECK_MEM(out, real, 32);
    CHECK(count_entries() == before + 1);
    wk_store_close(s);
}

static void test_stale_and_foreign_names(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    uint8_t (*base)[32] = NULL;
    size_t nbase = 0;
    REQUIRE(wk_store_list(s, &base, &nbase, &e) == WK_OK);
    size_t before = count_entries();

    /* a crash's leftovers: a stale temporary (idle 2 h) and a fresh one */
    const char *stale = ".tmp-stale1", *fresh = ".tmp-fresh1";
    const char canon_name[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcde"; /* 42 chars */
    char tail_bad[44], dir_name[44];
    memset(tail_bad, '0', 42);
    tail_bad[42] = '1'; /* nonzero unused bits: not canonical */
    tail_bad[43] = 0;
    uint8_t dir_hash[32];
    wk_iltp_blob_hash((const uint8_t *)"dir", 3, dir_hash);
    b64(dir_hash, dir_name);
    REQUIRE(write_file(stale, "partial", 7));
    REQUIRE(write_file(fresh, "partial", 7));
    REQUIRE(write_file("notahash", "x", 1));
    REQUIRE(write_file(canon_name, "x", 1));
    REQUIRE(write_file(tail_bad, "x", 1));
    REQUIRE(mkdir(blob_path(dir_name), 0755) == 0);
    struct timespec old[2];
    old[0].tv_sec = old[1].tv_sec = time(NULL) - 7200;
    old[0].tv_nsec = old[1].tv_nsec = 0;
    REQUIRE(utimensat(AT_FDCWD, blob_path(stale), old, 0) == 0);

    uint8_t (*hs)[32] = NULL;
    size_t n = 0;
    CHECK(wk_store_list(s, &hs, &n, &e) == WK_OK && n == nbase);
    CHECK(n == nbase && (n == 0 || memcmp(hs, base, n * 32) == 0));
    free(hs);
    CHECK(!wk_store_has(s, dir_hash));
    uint8_t *d = NULL;
    size_t dl = 0;
    CHECK(wk_store_get(s, dir_hash, &d, &dl, &e) == WK_ERR_HOST_STORE_CORRUPT);
    wk_store_close(s);

    /* open removes the stale temporary only */
    s = wk_store_open(g_dir, false, &e);
    REQUIRE(s);
    CHECK(!exists(stale));
    CHECK(exists(fresh) && exists("notahash") && exists(canon_name) && exists(tail_bad) && exists(dir_name));
    size_t removed = 99;
    CHECK(wk_store_gc(s, WK_STORE_STALE_SECONDS, &removed, &e) == WK_OK && removed == 0);
    CHECK(wk_store_gc(s, 0, &removed, &e) == WK_OK && removed == 1);
    CHECK(!exists(fresh) && exists("notahash"));
    hs = NULL;
    CHECK(wk_store_list(s, &hs, &n, &e) == WK_OK && n == nbase);
    free(hs);
    wk_store_close(s);
    unlink(blob_path("notahash"));
    unlink(blob_path(canon_name));
    unlink(blob_path(tail_bad));
    rmdir(blob_path(dir_name));
    CHECK(count_entries() == before);
    free(base);
}

static void test_corruption(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    const uint8_t data[] = "hello, store";
    size_t len = sizeof data - 1;
    uint8_t h[32];
    REQUIRE(wk_store_put(s, data, len, NULL, h, NULL, &e) == WK_OK);
    char name[44];
    b64(h, name);

    /* same size, one byte changed */
    REQUIRE(chmod(blob_path(name), 0644) == 0);
    REQUIRE(write_file(name, "jello, store", len));
    CHECK(wk_store_has(s, h));
    uint8_t *d = (uint8_t *)1;
    size_t dl = 5;
    CHECK(wk_store_get(s, h, &d, &dl, &e) == WK_ERR_HOST_STORE_CORRUPT && d == NULL);
    CHECK(e.category == WK_CAT_INTEGRATION && strstr(e.msg, name) != NULL);
    char line[256];
    CHECK(strncmp(wk_error_format(&e, line, sizeof line), "HOST_ERR_STORE_CORRUPT: ", 24) == 0);
    uint8_t (*hs)[32] = NULL;
    size_t n = 0;
    bool listed = false;
    CHECK(wk_store_list(s, &hs, &n, &e) == WK_OK);
    for (size_t i = 0; i < n; i++) listed |= memcmp(hs[i], h, 32) == 0;
    CHECK(listed);
    free(hs);
    /* verification off: the bytes as they are */
    wk_store_set_verify(s, false);
    CHECK(wk_store_get(s, h, &d, &dl, &e) == WK_OK && dl == len && memcmp(d, "jello, store", len) == 0);
    free(d);
    wk_store_set_verify(s, true);

    /* a later put of the right data replaces the damaged file */
    bool existed = true;
    CHECK(wk_store_put(s, data, len, h, NULL, &existed, &e) == WK_OK && !existed);
    CHECK(wk_store_get(s, h, &d, &dl, &e) == WK_OK && dl == len && memcmp(d, data, len) == 0);
    free(d);

    /* truncated on disk */
    REQUIRE(chmod(blob_path(name), 0644) == 0);
    REQUIRE(write_file(name, data, len - 1));
    CHECK(wk_store_get(s, h, &d, &dl, &e) == WK_ERR_HOST_STORE_CORRUPT);
    CHECK(wk_store_put(s, data, len, NULL, NULL, &existed, &e) == WK_OK && !existed);
    CHECK(wk_store_get(s, h, &d, &dl, &e) == WK_OK && dl == len);
    free(d);
    wk_store_close(s);
}

/* Open descriptors of this process (Linux /proc; -1 where that is not available). */
static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

static int cmp32(const void *a, const void *b) { return memcmp(a, b, 32); }

static void test_many(void)
{
    enum { COUNT = 2000 };
    wk_error e;
    char dir[200];
    snprintf(dir, sizeof dir, "%s/many", g_root);
    wk_store *s = wk_store_open(dir, true, &e);
    REQUIRE(s);
    uint8_t (*want)[32] = malloc(COUNT * 32);
    REQUIRE(want);
    for (int i = 0; i < COUNT; i++) {
        char text[32];
        int tl = snprintf(text, sizeof text, "small Blob %d", i);
        if (wk_store_put(s, (const uint8_t *)text, (size_t)tl, NULL, want[i], NULL, &e) != WK_OK) {
            CHECKF(0, "put %d: %s", i, e.msg);
            break;
        }
    }
    qsort(want, COUNT, 32, cmp32);
    uint8_t (*hs)[32] = NULL;
    size_t n = 0;
    REQUIRE(wk_store_list(s, &hs, &n, &e) == WK_OK);
    CHECK(n == COUNT);
    CHECK(n == COUNT && memcmp(hs, want, sizeof(uint8_t[32]) * COUNT) == 0);
    /* B64A names sort like the bytes */
    bool text_sorted = true;
    for (size_t i = 1; i < n; i++) {
        char a[44], b[44];
        b64(hs[i - 1], a);
        b64(hs[i], b);
        text_sorted &= strcmp(a, b) < 0;
    }
    CHECK(text_sorted);
    size_t bad = 0;
    for (size_t i = 0; i < n; i += 97) {
        uint8_t *d = NULL;
        size_t dl = 0;
        if (wk_store_get(s, hs[i], &d, &dl, &e) != WK_OK || dl < 11 || memcmp(d, "small Blob ", 11) != 0) bad++;
        free(d);
    }
    CHECK(bad == 0);
    free(hs);
    free(want);
    wk_store_close(s);
}

/* Streaming reads: any piece size gives the data; the read that reaches the end verifies the
 * hash and refuses to return a last piece that does not match. */
static void test_reader(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    size_t n = 300000;
    uint8_t *d = malloc(n), *got = malloc(n);
    fill(d, n, 77);
    uint8_t h[32];
    REQUIRE(wk_store_put(s, d, n, NULL, h, NULL, &e) == WK_OK);
    size_t pieces[] = {1, 1000, 65536, 300000, 1 << 20};
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        uint64_t len = 0;
        wk_store_reader *r = wk_store_reader_open(s, h, &len, &e);
        REQUIRE(r);
        CHECK(len == n);
        size_t off = 0, g;
        while (off < n && wk_store_reader_read(r, got + off, pieces[k], &g, &e) == WK_OK && g) off += g;
        CHECK(off == n && memcmp(got, d, n) == 0);
        CHECK(wk_store_reader_read(r, got, 10, &g, &e) == WK_OK && g == 0);
        wk_store_reader_close(r);
    }
    uint64_t len = 0;
    CHECK(wk_store_stat(s, h, &len, &e) == WK_OK && len == n);
    /* damage the last byte: every piece but the last comes back, the last is refused */
    char name[44];
    b64(h, name);
    REQUIRE(chmod(blob_path(name), 0644) == 0);
    int fd = open(blob_path(name), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, "x", 1, (off_t)n - 1) == 1);
    close(fd);
    wk_store_reader *r = wk_store_reader_open(s, h, NULL, &e);
    REQUIRE(r);
    size_t g = 0, off = 0;
    while (off + 65536 < n && wk_store_reader_read(r, got + off, 65536, &g, &e) == WK_OK) off += g;
    CHECK(off == n - n % 65536 - (n % 65536 ? 0 : 65536));
    CHECK(wk_store_reader_read(r, got + off, 65536, &g, &e) == WK_ERR_HOST_STORE_CORRUPT && g == 0);
    wk_store_reader_close(r);
    unlink(blob_path(name));
    uint8_t absent[32] = {1};
    CHECK(wk_store_reader_open(s, absent, NULL, &e) == NULL && e.code == WK_ERR_HOST_NOT_FOUND);
    CHECK(wk_store_stat(s, absent, NULL, &e) == WK_ERR_HOST_NOT_FOUND);
    free(d);
    free(got);
    wk_store_close(s);
}

/* The index: sequence numbers in order of addition, ordered walks bounded by a snapshot,
 * additions merged into the order as they come. */
static void test_index(void)
{
    wk_error e;
    wk_store_index *x = wk_store_index_create(&e);
    REQUIRE(x);
    enum { N = 5000 };
    static uint8_t hs[N][32];
    for (int i = 0; i < N; i++) fill(hs[i], 32, (uint32_t)i + 1000);
    uint8_t prev[32], out[32];
    for (int i = 0; i < N; i++) {
        CHECK(wk_store_index_add(x, hs[i], (uint64_t)i, NULL));
        CHECK(!wk_store_index_add(x, hs[i], 9, NULL)); /* already there */
        if (i % 97 == 0) {
            /* a walk now sees exactly the first i+1, in order */
            size_t k = 0;
            bool have = false;
            while (wk_store_index_next(x, have ? prev : NULL, (uint64_t)i + 1, out)) {
                if (have) CHECK(memcmp(prev, out, 32) < 0);
                memcpy(prev, out, 32);
                have = true;
                k++;
            }
            CHECK(k == (size_t)i + 1);
        }
    }
    CHECK(wk_store_index_seq(x) == N && wk_store_index_count(x) == N);
    uint64_t len, seq;
    CHECK(wk_store_index_has(x, hs[1234], &len, &seq) && len == 1234 && seq == 1235);
    uint8_t absent[32] = {0};
    CHECK(!wk_store_index_has(x, absent, NULL, NULL));
    /* a snapshot: later additions are skipped */
    size_t k = 0;
    bool have = false;
    while (wk_store_index_next(x, have ? prev : NULL, 100, out)) {
        uint64_t s2;
        CHECK(wk_store_index_has(x, out, NULL, &s2) && s2 <= 100);
        memcpy(prev, out, 32);
        have = true;
        k++;
    }
    CHECK(k == 100);
    wk_iltp_store_ops ops = wk_store_index_ops(x);
    CHECK(ops.has(ops.ctx, hs[7], &len, NULL) && len == 7 && ops.seq(ops.ctx) == N);
    wk_store_index_free(x);

    /* loaded from a store: every Blob file, with its size */
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    uint8_t (*list)[32] = NULL;
    size_t n = 0;
    REQUIRE(wk_store_list(s, &list, &n, &e) == WK_OK);
    x = wk_store_index_load(s, &e);
    REQUIRE(x);
    CHECK(wk_store_index_count(x) == n);
    for (size_t i = 0; i < n; i++) {
        uint64_t l1 = 0, l2 = 1;
        CHECK(wk_store_index_has(x, list[i], &l1, NULL) && wk_store_stat(s, list[i], &l2, &e) == WK_OK && l1 == l2);
    }
    free(list);
    wk_store_index_free(x);
    wk_store_close(s);
}

/* Field 22 of /proc/self/stat. */
static unsigned long long self_start(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY);
    ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (r <= 0) return 0;
    buf[r] = 0;
    char *p = strrchr(buf, ')');
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ') field++;
    return strtoull(p, NULL, 10);
}

/* Opening a store removes a dead writer's temporaries (named by pid and start time), keeps a
 * live one's, and its own writers' temporaries carry the owner. */
static void test_owner_named_temporaries(void)
{
    wk_error e;
    wk_store *s = wk_store_open(g_dir, true, &e);
    REQUIRE(s);
    wk_store_writer *w = wk_store_writer_begin(s, 10, &e);
    REQUIRE(w);
    char want[64];
    snprintf(want, sizeof want, ".tmp-%ld-%llu-", (long)getpid(), self_start());
    DIR *d = opendir(g_blobs);
    struct dirent *de;
    bool found = false;
    while ((de = readdir(d)))
        if (strncmp(de->d_name, want, strlen(want)) == 0 && strlen(de->d_name) == strlen(want) + 12) found = true;
    closedir(d);
    CHECKF(found, "no temporary named %s<12>", want);
    /* another open of the store (a live writer: this process) keeps it */
    wk_store *s2 = wk_store_open(g_dir, false, &e);
    REQUIRE(s2);
    wk_store_close(s2);
    size_t before = count_entries();
    /* a dead process's temporary, and this pid with another start time (a reused pid) */
    pid_t child = fork();
    if (child == 0) _exit(0);
    int st;
    waitpid(child, &st, 0);
    char dead[64], reused[64];
    snprintf(dead, sizeof dead, ".tmp-%ld-%llu-AAAAAAAAAAAA", (long)child, self_start());
    snprintf(reused, sizeof reused, ".tmp-%ld-%llu-BBBBBBBBBBBB", (long)getpid(), self_start() + 1);
    REQUIRE(write_file(dead, "x", 1));
    REQUIRE(write_file(reused, "x", 1));
    s2 = wk_store_open(g_dir, false, &e);
    REQUIRE(s2);
    wk_store_close(s2);
    struct stat sb;
    CHECK(lstat(blob_path(dead), &sb) != 0 && lstat(blob_path(reused), &sb) != 0);
    CHECK(count_entries() == before);
    uint8_t data[10] = "0123456789";
    CHECK(wk_store_writer_write(w, data, 10, &e) == WK_OK && wk_store_writer_commit(w, NULL, NULL, &e) == WK_OK);
    wk_store_close(s);
}

int main(void)
{
    strcpy(g_root, "/tmp/wk_store_test_XXXXXX");
    if (!mkdtemp(g_root)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(g_dir, sizeof g_dir, "%s/s", g_root);
    snprintf(g_blobs, sizeof g_blobs, "%s/blobs", g_dir);
    long fds = open_fds();
    test_open_and_codes();
    test_roundtrips();
    test_cap_and_32mib();
    test_refusals();
    test_stale_and_foreign_names();
    test_corruption();
    test_many();
    test_reader();
    test_index();
    test_owner_named_temporaries();
    CHECKF(open_fds() == fds, "%ld descriptors open at the start, %ld at the end", fds, open_fds());
    rm_rf(g_root);
    struct stat st;
    CHECK(lstat(g_root, &st) != 0 && errno == ENOENT);
    return wk_test_summary("host_store");
}
