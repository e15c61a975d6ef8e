/* wirekit host: the content-addressed Blob store (include/wirekit/host.h, "Blob store").
 *
 * DIR/blobs/<B64A hash> holds a Blob's data bytes. Every write goes to a fresh temporary
 * DIR/blobs/.tmp-<pid>-<start>-<12 B64A characters> created with O_EXCL (mode 0444 minus umask),
 * which is written, fsynced, renamed over the final name and followed by an fsync of DIR/blobs.
 * A '.' is outside the B64A alphabet, so a temporary can never be taken for a Blob. Every name is
 * resolved relative to one directory descriptor held for the store's lifetime, so a path is only
 * parsed at open.
 *
 * The temporary's name carries its owner: the writing process's id and its start time (field 22
 * of /proc/PID/stat, clock ticks since boot), so that opening a store can tell a crashed
 * writer's leftover (no process with that id and start time) from a live writer's file, however
 * recent; a reused process id has another start time. Temporaries without an owner in their name
 * (older versions) fall back to the idle-time rule.
 *
 * Directory fsyncs are shared: a commit that renamed its temporary waits until an fsync of
 * DIR/blobs that began after its rename has completed; concurrent commits (several threads on one
 * wk_store) are covered by one fsync instead of one each.
 */
#include <wirekit/host.h>
#include <wirekit/iltp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_PREFIX ".tmp-"
#define TMP_PREFIX_LEN 5
#define TMP_RANDOM_BYTES 9 /* 12 B64A characters */
#define TMP_NAME_MAX 64 /* ".tmp-" pid "-" start "-" 12 characters */
#define TMP_ATTEMPTS 64
#define IO_CHUNK 65536
#define NAME_LEN WK_STORE_HASH_TEXT_LEN

struct wk_store {
    int dirfd;   /* DIR/blobs, O_DIRECTORY */
    bool verify; /* verify hashes on get */
    char *path;  /* DIR/blobs, for messages */
    /* the shared directory fsync */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t renamed;  /* renames done (a ticket per commit) */
    uint64_t synced;   /* every rename up to this ticket is covered by a completed fsync */
    bool syncing;
};

struct wk_store_writer {
    wk_store *s;
    int fd;          /* the temporary; -1 once closed */
    bool failed;     /* the temporary is gone; only commit (refused) and abort remain */
    uint64_t len;    /* declared data length */
    uint64_t written;
    char tmp[TMP_NAME_MAX + 1];
    wk_blake3_hasher hasher; /* over "Data-Length: N\n\n" and the data so far */
};

/* ------------------------------------------------------------------------------------------- */
/* Helpers */

static wk_code io_error(wk_error *err, int e, const char *what, const char *name)
{
    char text[80];
    if (strerror_r(e, text, sizeof text) != 0) snprintf(text, sizeof text, "errno %d", e);
    return wk_error_set(err, WK_ERR_HOST_IO, WK_NO_OFFSET, "%s %s: %s", what, name, text);
}

/* A Blob the store is asked to take over the cap: the caller's (WK_ERR_ARG, Integration). */
static wk_code too_large(wk_error *err, uint64_t len)
{
    return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "%s: Blob data of %llu bytes is over 32 MiB",
                        wk_error_name(WK_ERR_ILTP_BLOB_TOO_LARGE), (unsigned long long)len);
}

static void hash_name(const uint8_t hash[32], char name[NAME_LEN + 1])
{
    wk_b64a_encode(hash, 32, name);
    name[NAME_LEN] = 0;
}

/* True if name is the canonical B64A text of 32 bytes (decoded into hash). */
static bool name_to_hash(const char *name, uint8_t hash[32])
{
    size_t n;
    return strlen(name) == NAME_LEN && wk_b64a_decode(name, NAME_LEN, hash, 32, &n, NULL) == WK_OK &&
           n == 32;
}

/* Starts the H3 Blob hash of a len-byte Blob: its content begins "Data-Length: N\n\n". */
static void blob_hash_begin(wk_blake3_hasher *h, uint64_t len)
{
    char head[WK_ILTP_BLOB_CONTENT_HEAD_MAX];
    size_t hl = wk_iltp_blob_content_head_format(len, head);
    wk_blake3_init(h);
    wk_blake3_update(h, head, hl);
}

static bool write_all(int fd, const uint8_t *p, size_t n, int *e)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            *e = errno;
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads up to n bytes (fewer only at end of file); returns the count or -1 with *e. */
static ssize_t read_full(int fd, uint8_t *p, size_t n, int *e)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            *e = errno;
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* fsync of a directory; EINVAL means the file system cannot sync directories (nothing to do). */
static int fsync_dir(int fd)
{
    if (fsync(fd) == 0 || errno == EINVAL) return 0;
    return -1;
}

/* Best-effort fsync of the directory that contains path (after creating path in it). */
static void fsync_parent(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    while (n > 0 && path[n - 1] != '/') n--;
    char *parent = malloc(n + 2);
    if (!parent) return;
    if (n == 0) strcpy(parent, ".");
    else { memcpy(parent, path, n); parent[n] = 0; }
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync_dir(fd);
        close(fd);
    }
    free(parent);
}

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot); 0 if unreadable. */
static unsigned long long proc_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    if (!p) return 0;
    /* fields after the name start at field 3 (state); the start time is field 22 */
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ') field++;
    return field == 22 ? strtoull(p, NULL, 10) : 0;
}

static unsigned long long self_start(void)
{
    static unsigned long long v; /* benign race: every thread computes the same value */
    if (!v) v = proc_start((long)getpid());
    return v;
}

/* Whether a temporary's name says its owner is alive: 1 alive, 0 dead, -1 no owner in the name. */
static int tmp_owner_alive(const char *name)
{
    const char *p = name + TMP_PREFIX_LEN;
    char *end;
    errno = 0;
    long pid = strtol(p, &end, 10);
    if (end == p || *end != '-' || pid <= 0 || errno) return -1;
    p = end + 1;
    unsigned long long start = strtoull(p, &end, 10);
    if (end == p || *end != '-' || strlen(end + 1) != 12) return -1;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
    unsigned long long now_start = proc_start(pid);
    if (now_start == 0) {
        /* no /proc: the process exists (kill said so) */
        return access("/proc/self/stat", R_OK) == 0 ? 0 : 1;
    }
    return now_start == start ? 1 : 0;
}

/* Creates a fresh temporary; its name goes to name. salt tells concurrent callers apart within
 * the process (the caller's own live object), the pid and start time across processes; O_EXCL
 * settles any collision. Returns the descriptor, or -1 with *err. */
static int tmp_create(wk_store *s, const void *salt, char name[TMP_NAME_MAX + 1], wk_error *err)
{
    for (unsigned attempt = 0; attempt < TMP_ATTEMPTS; attempt++) {
        struct {
            uintptr_t salt;
            long pid;
            long long sec;
            long nsec;
            unsigned attempt;
        } seed;
        struct timespec ts = {0, 0};
        memset(&seed, 0, sizeof seed);
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        seed.salt = (uintptr_t)salt;
        seed.pid = (long)getpid();
        seed.sec = (long long)ts.tv_sec;
        seed.nsec = ts.tv_nsec;
        seed.attempt = attempt;
        uint8_t r[32];
        wk_blake3(&seed, sizeof seed, r);
        int n = snprintf(name, TMP_NAME_MAX + 1, TMP_PREFIX "%ld-%llu-", seed.pid, self_start());
        wk_b64a_encode(r, TMP_RANDOM_BYTES, name + n);
        name[n + 12] = 0;
        int fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd >= 0) return fd;
        if (errno != EEXIST && errno != EINTR) {
            io_error(err, errno, "cannot create a temporary in", s->path);
            return -1;
        }
    }
    wk_error_set(err, WK_ERR_HOST_IO, WK_NO_OFFSET, "cannot create a temporary in %s: names taken",
                 s->path);
    return -1;
}

/* fsync of DIR/blobs covering every rename done before the call, shared among threads. */
static int dir_sync(wk_store *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t ticket = ++s->renamed;
    int rc = 0;
    while (s->synced < ticket) {
        if (s->syncing) {
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        s->syncing = true;
        uint64_t covers = s->renamed;
        pthread_mutex_unlock(&s->mu);
        int r = fsync_dir(s->dirfd);
        int e = errno;
        pthread_mutex_lock(&s->mu);
        s->syncing = false;
        if (r == 0) s->synced = covers;
        pthread_cond_broadcast(&s->cv);
        if (r != 0) {
            rc = -1;
            errno = e;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Makes the written temporary the Blob `final`: fsync, close, rename, fsync the directory. Closes
 * fd in every case and removes the temporary on failure. */
static wk_code tmp_finish(wk_store *s, int fd, const char *tmp, const char *final, wk_error *err)
{
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlinkat(s->dirfd, tmp, 0);
        return io_error(err, e, "cannot fsync", tmp);
    }
    if (close(fd) != 0) {
        int e = errno;
        unlinkat(s->dirfd, tmp, 0);
        return io_error(err, e, "cannot close", tmp);
    }
    if (renameat(s->dirfd, tmp, s->dirfd, final) != 0) {
        int e = errno;
        unlinkat(s->dirfd, tmp, 0);
        return io_error(err, e, "cannot rename to", final);
    }
    /* The Blob is complete under its name; only its durability is in doubt if this fails. */
    if (dir_sync(s) != 0) return io_error(err, errno, "cannot fsync", s->path);
    return WK_OK;
}

/* True if `name` is a regular file holding exactly data[0..len). */
static bool stored_equals(wk_store *s, const char *name, const uint8_t *data, size_t len)
{
    int fd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    struct stat st;
    bool same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == len;
    uint8_t *buf = same ? malloc(IO_CHUNK) : NULL;
    if (!buf) same = false;
    int e = 0;
    for (size_t off = 0; same && off < len;) {
        size_t want = len - off < IO_CHUNK ? len - off : IO_CHUNK;
        ssize_t r = read_full(fd, buf, want, &e);
        if (r < 0 || (size_t)r != want || memcmp(buf, data + off, want) != 0) same = false;
        off += want;
    }
    if (same && read_full(fd, buf, 1, &e) != 0) same = false; /* the file must end here */
    free(buf);
    close(fd);
    return same;
}

/* ------------------------------------------------------------------------------------------- */
/* Open, close, gc */

/* Removes temporaries: with dead_owners, those whose owner (named in them) is gone, and those
 * without an owner idle for max_age_seconds; otherwise those idle for max_age_seconds (0: all). */
static wk_code gc(wk_store *s, uint64_t max_age_seconds, bool dead_owners, size_t *removed, wk_error *err);

wk_code wk_store_gc(wk_store *s, uint64_t max_age_seconds, size_t *removed, wk_error *err)
{
    return gc(s, max_age_seconds, false, removed, err);
}

static wk_code gc(wk_store *s, uint64_t max_age_seconds, bool dead_owners, size_t *removed, wk_error *err)
{
    if (removed) *removed = 0;
    if (!s) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no store");
    int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0) close(fd);
        return io_error(err, e, "cannot list", s->path);
    }
    time_t now = time(NULL);
    wk_code rc = WK_OK;
    struct dirent *de;
    for (;;) {
        errno = 0;
        if (!(de = readdir(d))) break;
        if (strncmp(de->d_name, TMP_PREFIX, TMP_PREFIX_LEN) != 0) continue;
        struct stat st;
        if (fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone */
        int alive = dead_owners ? tmp_owner_alive(de->d_name) : -1;
        if (alive == 1) continue;
        if (alive == -1 && max_age_seconds > 0 &&
            (st.st_mtime > now || (uint64_t)(now - st.st_mtime) < max_age_seconds))
            continue;
        if (unlinkat(s->dirfd, de->d_name, 0) == 0) {
            if (removed) (*removed)++;
        } else if (errno != ENOENT && rc == WK_OK) {
            rc = io_error(err, errno, "cannot remove", de->d_name);
        }
    }
    if (errno != 0 && rc == WK_OK) rc = io_error(err, errno, "cannot list", s->path);
    closedir(d);
    return rc;
}

wk_store *wk_store_open(const char *dir, bool create, wk_error *err)
{
    if (!dir || !*dir) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no store directory");
        return NULL;
    }
    size_t dl = strlen(dir);
    wk_store *s = malloc(sizeof *s);
    char *path = malloc(dl + sizeof "/blobs");
    if (!s || !path) {
        free(s);
        free(path);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "store handle");
        return NULL;
    }
    memcpy(path, dir, dl);
    memcpy(path + dl, "/blobs", sizeof "/blobs");
    s->path = path;
    s->verify = true;
    s->dirfd = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->renamed = s->synced = 0;
    s->syncing = false;
    if (create) {
        if (mkdir(dir, 0777) == 0) fsync_parent(dir);
        else if (errno != EEXIST) { io_error(err, errno, "cannot create", dir); goto fail; }
        if (mkdir(path, 0777) == 0) fsync_parent(path);
        else if (errno != EEXIST) { io_error(err, errno, "cannot create", path); goto fail; }
    }
    s->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dirfd < 0) { io_error(err, errno, "cannot open store", path); goto fail; }
    /* Best effort: a read-only store still opens. A crashed writer's temporaries go now. */
    (void)gc(s, WK_STORE_STALE_SECONDS, true, NULL, NULL);
    return s;
fail:
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(path);
    free(s);
    return NULL;
}

void wk_store_close(wk_store *s)
{
    if (!s) return;
    if (s->dirfd >= 0) close(s->dirfd);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->path);
    free(s);
}

void wk_store_set_verify(wk_store *s, bool verify)
{
    if (s) s->verify = verify;
}

/* ------------------------------------------------------------------------------------------- */
/* Put */

static wk_code mismatch(wk_error *err, const uint8_t got[32], const uint8_t want[32])
{
    char g[NAME_LEN + 1], w[NAME_LEN + 1];
    hash_name(got, g);
    hash_name(want, w);
    return wk_error_set(err, WK_ERR_HOST_HASH_MISMATCH, WK_NO_OFFSET, "data hashes to %s, not %s", g, w);
}

wk_code wk_store_put(wk_store *s, const uint8_t *data, size_t len, const uint8_t *expect_hash,
                     uint8_t out_hash[32], bool *existed, wk_error *err)
{
    static const uint8_t empty[1] = {0};
    if (existed) *existed = false;
    if (!s || (!data && len)) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no store or no data");
    if (len > WK_ILTP_BLOB_DATA_CAP) return too_large(err, len);
    if (!data) data = empty;
    uint8_t hash[32];
    wk_iltp_blob_hash(data, len, hash);
    if (expect_hash && memcmp(hash, expect_hash, 32) != 0) return mismatch(err, hash, expect_hash);
    if (out_hash) memcpy(out_hash, hash, 32);
    char name[NAME_LEN + 1];
    hash_name(hash, name);
    if (stored_equals(s, name, data, len)) {
        if (existed) *existed = true;
        return WK_OK;
    }
    char tmp[TMP_NAME_MAX + 1];
    int fd = tmp_create(s, hash /* on this thread's stack: unique among live calls */, tmp, err);
    if (fd < 0) return WK_ERR_HOST_IO;
    int e = 0;
    if (!write_all(fd, data, len, &e)) {
        close(fd);
        unlinkat(s->dirfd, tmp, 0);
        return io_error(err, e, "cannot write", tmp);
    }
    return tmp_finish(s, fd, tmp, name, err);
}

/* ------------------------------------------------------------------------------------------- */
/* Streaming writer */

wk_store_writer *wk_store_writer_begin(wk_store *s, uint64_t len, wk_error *err)
{
    if (!s) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no store");
        return NULL;
    }
    if (len > WK_ILTP_BLOB_DATA_CAP) {
        too_large(err, len);
        return NULL;
    }
    wk_store_writer *w = malloc(sizeof *w);
    if (!w) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "store writer");
        return NULL;
    }
    w->s = s;
    w->len = len;
    w->written = 0;
    w->failed = false;
    w->fd = tmp_create(s, w, w->tmp, err);
    if (w->fd < 0) {
        free(w);
        return NULL;
    }
    blob_hash_begin(&w->hasher, len);
    return w;
}

/* Closes and removes the temporary; the writer is failed from now on. */
static void writer_drop(wk_store_writer *w)
{
    if (w->failed) return;
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    unlinkat(w->s->dirfd, w->tmp, 0);
    w->failed = true;
}

wk_code wk_store_writer_write(wk_store_writer *w, const uint8_t *p, size_t n, wk_error *err)
{
    if (!w) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no writer");
    if (w->failed) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "store writer already failed");
    if (n == 0) return WK_OK;
    if (!p || n > w->len - w->written) {
        writer_drop(w);
        if (!p) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no data");
        return wk_error_set(err, WK_ERR_ARG, w->written, "%zu more bytes exceed the declared %llu",
                            n, (unsigned long long)w->len);
    }
    int e = 0;
    if (!write_all(w->fd, p, n, &e)) {
        writer_drop(w);
        return io_error(err, e, "cannot write", w->tmp);
    }
    wk_blake3_update(&w->hasher, p, n);
    w->written += n;
    return WK_OK;
}

wk_code wk_store_writer_commit(wk_store_writer *w, const uint8_t *expect_hash, uint8_t out_hash[32],
                               wk_error *err)
{
    if (!w) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no writer");
    wk_code rc;
    if (w->failed) {
        rc = wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "store writer already failed");
    } else if (w->written != w->len) {
        writer_drop(w);
        rc = wk_error_set(err, WK_ERR_ARG, w->written, "Blob ended after %llu of the declared %llu bytes",
                          (unsigned long long)w->written, (unsigned long long)w->len);
    } else {
        uint8_t hash[32];
        wk_blake3_finalize(&w->hasher, hash, 32);
        if (expect_hash && memcmp(hash, expect_hash, 32) != 0) {
            writer_drop(w);
            rc = mismatch(err, hash, expect_hash);
        } else {
            char name[NAME_LEN + 1];
            hash_name(hash, name);
            int fd = w->fd;
            w->fd = -1;
            rc = tmp_finish(w->s, fd, w->tmp, name, err);
            if (rc == WK_OK && out_hash) memcpy(out_hash, hash, 32);
        }
    }
    free(w);
    return rc;
}

void wk_store_writer_abort(wk_store_writer *w)
{
    if (!w) return;
    writer_drop(w);
    free(w);
}

/* ------------------------------------------------------------------------------------------- */
/* Has, get, list */

bool wk_store_has(wk_store *s, const uint8_t hash[32])
{
    if (!s || !hash) return false;
    char name[NAME_LEN + 1];
    hash_name(hash, name);
    struct stat st;
    return fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

wk_code wk_store_get(wk_store *s, const uint8_t hash[32], uint8_t **data, size_t *len, wk_error *err)
{
    if (data) *data = NULL;
    if (len) *len = 0;
    if (!s || !hash || !data || !len) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "missing argument");
    char name[NAME_LEN + 1];
    hash_name(hash, name);
    int fd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) return wk_error_set(err, WK_ERR_HOST_NOT_FOUND, WK_NO_OFFSET, "no Blob %s", name);
        if (errno == ELOOP)
            return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s is a symbolic link", name);
        return io_error(err, errno, "cannot open", name);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return io_error(err, e, "cannot stat", name);
    }
    if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > WK_ILTP_BLOB_DATA_CAP) {
        close(fd);
        return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s is %s", name,
                            S_ISREG(st.st_mode) ? "over 32 MiB" : "not a regular file");
    }
    size_t size = (size_t)st.st_size;
    /* one byte more than the size, to see a file that grew since fstat */
    uint8_t *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "%zu bytes for Blob %s", size, name);
    }
    int e = 0;
    ssize_t r = read_full(fd, buf, size + 1, &e);
    close(fd);
    if (r < 0) {
        free(buf);
        return io_error(err, e, "cannot read", name);
    }
    if ((size_t)r != size) {
        free(buf);
        return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s changed size while read", name);
    }
    if (s->verify) {
        uint8_t got[32];
        wk_iltp_blob_hash(buf, size, got);
        if (memcmp(got, hash, 32) != 0) {
            free(buf);
            return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s fails its hash", name);
        }
    }
    *data = buf;
    *len = size;
    return WK_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Streaming reader */

struct wk_store_reader {
    wk_store *s;
    int fd;
    uint64_t len, done;
    uint8_t hash[32];
    char name[NAME_LEN + 1];
    wk_blake3_hasher hasher;
};

wk_code wk_store_stat(wk_store *s, const uint8_t hash[32], uint64_t *len, wk_error *err)
{
    char name[NAME_LEN + 1];
    hash_name(hash, name);
    struct stat st;
    if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return wk_error_set(err, WK_ERR_HOST_NOT_FOUND, WK_NO_OFFSET, "no Blob %s", name);
        return io_error(err, errno, "cannot stat", name);
    }
    if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > WK_ILTP_BLOB_DATA_CAP)
        return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s is %s", name,
                            S_ISREG(st.st_mode) ? "over 32 MiB" : "not a regular file");
    if (len) *len = (uint64_t)st.st_size;
    return WK_OK;
}

wk_store_reader *wk_store_reader_open(wk_store *s, const uint8_t hash[32], uint64_t *len, wk_error *err)
{
    wk_store_reader *r = malloc(sizeof *r);
    if (!r) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "store reader");
        return NULL;
    }
    r->s = s;
    memcpy(r->hash, hash, 32);
    hash_name(hash, r->name);
    r->fd = openat(s->dirfd, r->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (r->fd < 0) {
        if (errno == ENOENT) wk_error_set(err, WK_ERR_HOST_NOT_FOUND, WK_NO_OFFSET, "no Blob %s", r->name);
        else if (errno == ELOOP) wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s is a symbolic link", r->name);
        else io_error(err, errno, "cannot open", r->name);
        free(r);
        return NULL;
    }
    struct stat st;
    if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size > WK_ILTP_BLOB_DATA_CAP) {
        int e = errno;
        bool bad = fstat(r->fd, &st) == 0;
        if (bad) wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s is not a regular file of at most 32 MiB", r->name);
        else io_error(err, e, "cannot stat", r->name);
        close(r->fd);
        free(r);
        return NULL;
    }
    r->len = (uint64_t)st.st_size;
    r->done = 0;
    blob_hash_begin(&r->hasher, r->len);
    if (len) *len = r->len;
    return r;
}

wk_code wk_store_reader_read(wk_store_reader *r, uint8_t *buf, size_t cap, size_t *got, wk_error *err)
{
    *got = 0;
    uint64_t left = r->len - r->done;
    size_t want = left < cap ? (size_t)left : cap;
    int e = 0;
    ssize_t n = read_full(r->fd, buf, want, &e);
    if (n < 0) return io_error(err, e, "cannot read", r->name);
    if ((size_t)n != want)
        return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s changed size while read", r->name);
    wk_blake3_update(&r->hasher, buf, want);
    if (r->done + want == r->len) {
        uint8_t extra;
        if (read_full(r->fd, &extra, 1, &e) != 0)
            return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s changed size while read", r->name);
        if (r->s->verify) {
            uint8_t h[32];
            wk_blake3_finalize(&r->hasher, h, 32);
            if (memcmp(h, r->hash, 32) != 0)
                return wk_error_set(err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET, "%s fails its hash", r->name);
        }
    }
    r->done += want;
    *got = want;
    return WK_OK;
}

void wk_store_reader_close(wk_store_reader *r)
{
    if (!r) return;
    close(r->fd);
    free(r);
}

static int hash_cmp(const void *a, const void *b) { return memcmp(a, b, 32); }

wk_code wk_store_list(wk_store *s, uint8_t (**hashes)[32], size_t *count, wk_error *err)
{
    if (hashes) *hashes = NULL;
    if (count) *count = 0;
    if (!s || !hashes || !count) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "missing argument");
    int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0) close(fd);
        return io_error(err, e, "cannot list", s->path);
    }
    uint8_t (*v)[32] = NULL;
    size_t n = 0, cap = 0;
    wk_code rc = WK_OK;
    struct dirent *de;
    for (;;) {
        errno = 0;
        if (!(de = readdir(d))) {
            if (errno != 0) rc = io_error(err, errno, "cannot list", s->path);
            break;
        }
        uint8_t h[32];
        if (!name_to_hash(de->d_name, h)) continue;
        struct stat st;
        if (fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            uint8_t (*nv)[32] = nc <= SIZE_MAX / 32 ? realloc(v, nc * 32) : NULL;
            if (!nv) {
                rc = wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "list of %zu hashes", nc);
                break;
            }
            v = nv;
            cap = nc;
        }
        memcpy(v[n++], h, 32);
    }
    closedir(d);
    if (rc != WK_OK) {
        free(v);
        return rc;
    }
    if (n > 1) qsort(v, n, 32, hash_cmp);
    *hashes = v;
    *count = n;
    return WK_OK;
}
