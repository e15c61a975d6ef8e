/* Ethereum Snappy (eth module) throughput, each wirekit number beside its baselines in one run.
 *
 *   block    wk_eth_snappy_block_encode / wk_eth_snappy_block_decode (our one-pass decoder, the kernel
 *            the library picks or --kernel forces) against snappy_compress / snappy_uncompress
 *            (Debian's libsnappy) on the same bytes, and our validating pass
 *            (wk_eth_snappy_block_validate) beside the decode; then block decode with each kernel
 *            forced in turn (portable, bmi2, avx2, avx512, those the CPU has) beside libsnappy;
 *   framed   encoding: the streaming encoder (64 KiB pushes and views, one final flush) and
 *            wk_eth_snappy_frame_encode_all against libsnappy compressing the same 64 KiB pieces as
 *            bare blocks (into one reused buffer); decoding: the streaming decoder (64 KiB pushes
 *            and views) against libsnappy uncompressing the same 64 KiB pieces (bare blocks, no
 *            checksums) and golang/snappy's framed Reader decoding the same stream (Debian's
 *            golang-github-golang-snappy-dev through tests/eth/go/snappy_peer.go framed-time, built
 *            offline into the build directory on each run; its own timings, median of N, each at
 *            least as long as ours); target: faster than both on every corpus. Then the streaming
 *            calls again with 1 MiB pushes and views, where whole chunks fit the caller's buffers;
 *   CRC-32C  wk_eth_crc32c (ISA-L crc32_iscsi) against wk_eth_crc32c_table (slicing-by-8) on 64 KiB and
 *            1 MiB buffers (target: ISA-L at least 25 GB/s);
 *   floor    on the random bytes in 64 KiB pieces: memcpy of every piece (all libsnappy does for
 *            a literal-only block) against CRC-32C then memcpy (the checksum floor: the least a
 *            decoder that verifies the framing format's checksums does for 0x01 chunks), and both
 *            in 4 KiB steps (what the decoder's fused wk_eth_crc32c_copy does); then the framed
 *            decoder on the same bytes (0x01 chunks), 64 KiB and 1 MiB pushes, against the floor;
 *   req/resp one response chunk carrying the real Bellatrix block of
 *            vectors/eth/reqresp-framed/lodestar/goerliShadowForkBlock.13249 (00, 4 context bytes,
 *            varint 8d c1 08, Lodestar's framed stream) read by wk_eth_rr_reader (created per stream,
 *            64 KiB pushes and views), against snappy_uncompress of the stream's three blocks and
 *            against the framing decoder on the same framed stream, also created per stream
 *            (target: the reader within 5 %); the reused (reset) decoder and golang/snappy's
 *            Reader on the same stream beside them.
 * Data: generated English-like text and JSON-like records, random bytes (deterministic), and real
 * vector files: the Opticks text (Go-encoded block), SSZ beacon blocks / a blob sidecar / a beacon
 * state (blocks as found), the EIP-706 Rinkeby block (devp2p, python-snappy-encoded block). Block
 * decode rows decode the file's own compressed bytes where there is one.
 *
 * Speeds are MB/s (10^6 bytes per second) of uncompressed bytes (CRC and floor: GB/s), the median
 * of N repetitions; in each repetition wirekit and the baseline run back to back (alternating which
 * goes first), each timing repeating the operation until it lasts 40 ms; ratio columns are the
 * median of the per-repetition speed ratios (the Go columns: ratio of the two medians). Every
 * output is checked against the input outside the timed region (and the wirekit and libsnappy
 * block encodings compared byte for byte; the Go peer's output by length and FNV-1a hash). The
 * last lines summarise the targets, met or MISSED, and name the kernel that ran.
 *
 * usage: eth_bench [--quick] [--reps N (default 11)] [--mib N (default 4)] [--vectors DIR]
 *                  [--kernel portable|bmi2|avx2|avx512|auto]
 *   --quick   a tiny run for CI (256 KiB corpora, 3 repetitions, 2 ms timings)
 *   --vectors the folder holding eth/ (default: WK_VECTORS_DIR from CMake, tests/vectors)
 *   --kernel  forces the block decoder's kernel for every row but the by-kernel table */
#include <wirekit/eth.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define WK_BENCH_NAME "eth_bench"
#include "bench_util.h"

#ifndef WK_VECTORS_DIR
#define WK_VECTORS_DIR "tests/vectors"
#endif

/* The block decoder's test hooks (src/eth/snappy_decode.c): force a kernel, name one. */
int wk_eth_snappy__set_kernel(int id);
const char *wk_eth_snappy__kernel_name(int id);
#define NKERNELS 4

#define PIECE ((size_t)65536)
#define RINKEBY "RLP Rinkeby block 272621 (EIP-706, python-snappy)"
#define BELLATRIX "SSZ Bellatrix block 13249 (lodestar)"
#define BIG_IO ((size_t)1 << 20)
#define MAX_REPS 51

/* ---------------------------------------------------------------------------------------------
 * Data
 * ------------------------------------------------------------------------------------------- */
static uint64_t rng_state = 0xe7e7e7e7ull;
static uint64_t rnd(void) { return splitmix64(&rng_state); }

/* The corpus builders fill a buffer of fixed size: what does not fit is dropped. */
typedef bench_buf sbuf;
static void put(sbuf *b, const void *s, size_t n) { bench_put_some(b, s, n); }
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static const char *const words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "no", "light", "colour", "rays",
    "glass", "prism", "experiment", "refraction", "observed", "image", "white", "red", "violet",
    "bodies", "motion", "reflexion", "surface", "sun", "through", "same", "likewise", "therefore"};
#define NWORDS (sizeof words / sizeof words[0])

/* English-like prose: sentences of common words, commas, paragraphs. */
static void english(uint8_t *dst, size_t n)
{
    sbuf b = {dst, 0, n};
    bool cap = true;
    while (b.n < n) {
        char w[24];
        snprintf(w, sizeof w, "%s", words[rnd() % NWORDS]);
        if (cap) w[0] = (char)(w[0] - 32);
        cap = false;
        puts_(&b, w);
        uint64_t r = rnd() % 20;
        if (r == 0) {
            puts_(&b, ".\n\n");
            cap = true;
        } else if (r < 3) {
            puts_(&b, ". ");
            cap = true;
        } else if (r < 5) {
            puts_(&b, ", ");
        } else {
            puts_(&b, " ");
        }
    }
}

/* JSON-like records: beacon-API-ish objects with numbers, booleans and random 32-byte roots. */
static void json(uint8_t *dst, size_t n)
{
    sbuf b = {dst, 0, n};
    uint64_t slot = 9552000;
    puts_(&b, "[\n");
    while (b.n < n) {
        char root[67], parent[67], line[512];
        root[0] = parent[0] = '0';
        root[1] = parent[1] = 'x';
        for (int i = 0; i < 64; i++) {
            root[2 + i] = "0123456789abcdef"[rnd() & 15];
            parent[2 + i] = "0123456789abcdef"[rnd() & 15];
        }
        root[66] = parent[66] = 0;
        slot += 1 + rnd() % 3;
        int len =
            snprintf(line, sizeof line,
                     "  {\"slot\": \"%llu\", \"proposer_index\": \"%llu\", \"parent_root\": "
                     "\"%s\", \"state_root\": \"%s\", \"finalized\": %s, \"attestations\": %u, "
                     "\"graffiti\": \"%s %s\"},\n",
                     (unsigned long long)slot, (unsigned long long)(rnd() % 1000000), parent, root,
                     rnd() % 2 ? "true" : "false", (unsigned)(rnd() % 128), words[rnd() % NWORDS],
                     words[rnd() % NWORDS]);
        put(&b, line, (size_t)len);
    }
}

static void random_bytes(uint8_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = rnd();
        memcpy(dst + i, &v, min_sz(8, n - i));
    }
}

static uint8_t *read_file(const char *dir, const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/eth/%s", dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "eth_bench: cannot open %s (pass --vectors DIR)\n", path);
        exit(1);
    }
    if (fseek(f, 0, SEEK_END) != 0) die("seek");
    long sz = ftell(f);
    if (sz < 0) die("ftell");
    rewind(f);
    uint8_t *p = xmalloc((size_t)sz);
    if (fread(p, 1, (size_t)sz, f) != (size_t)sz) die("short read");
    fclose(f);
    *len = (size_t)sz;
    return p;
}

static uint8_t *hex_decode(const uint8_t *text, size_t n, size_t *len)
{
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r')) n--;
    uint8_t *p = xmalloc(n / 2);
    long got = wk_hex_decode((const char *)text, n, p, n / 2);
    if (got < 0) die("bad hex vector");
    *len = (size_t)got;
    return p;
}

/* ---------------------------------------------------------------------------------------------
 * Timing
 * ------------------------------------------------------------------------------------------- */
static double min_seconds = 0.04;

typedef struct pair {
    double a, b;  /* medians, units per second (bytes / time / unit) */
    double ratio; /* median of the per-repetition a/b speed ratios */
} pair;

/* Times a against b over `bytes` per operation: reps repetitions, alternating the order. */
static pair compare(op_fn fa, void *ca, op_fn fb, void *cb, double bytes, double unit, int reps)
{
    double va[MAX_REPS], vb[MAX_REPS], q[MAX_REPS];
    time_pair(fa, ca, fb, cb, reps, min_seconds, va, vb);
    for (int k = 0; k < reps; k++) {
        q[k] = vb[k] / va[k];
        va[k] = bytes / va[k] / unit;
        vb[k] = bytes / vb[k] / unit;
    }
    pair p = {median(va, reps), median(vb, reps), median(q, reps)};
    return p;
}

/* ---------------------------------------------------------------------------------------------
 * Block format
 * ------------------------------------------------------------------------------------------- */
typedef struct block_job {
    const uint8_t *raw; /* uncompressed */
    size_t n;
    const uint8_t *comp; /* compressed block the decoders read */
    size_t comp_len;
    uint8_t *enc;        /* encoder output */
    size_t enc_cap, enc_len;
    uint8_t *out;        /* decoder output */
} block_job;

static void op_wk_block_encode(void *c)
{
    block_job *j = c;
    wk_error err;
    wk_out out = {j->enc, j->enc_cap, 0};
    if (wk_eth_snappy_block_encode(j->raw, j->n, &out, &err) != WK_DONE) die(err.msg);
    j->enc_len = out.pos;
}
static void op_lib_block_encode(void *c)
{
    block_job *j = c;
    size_t len = j->enc_cap;
    if (snappy_compress((const char *)j->raw, j->n, (char *)j->enc, &len) != SNAPPY_OK)
        die("snappy_compress");
    j->enc_len = len;
}
static void op_wk_block_decode(void *c)
{
    block_job *j = c;
    wk_error err;
    wk_in in = {j->comp, j->comp_len, 0};
    wk_out out = {j->out, j->n, 0};
    if (wk_eth_snappy_block_decode(&in, WK_ETH_SNAPPY_BLOCK_MAX, &out, &err) != WK_DONE)
        die(err.msg);
}
static void op_lib_block_decode(void *c)
{
    block_job *j = c;
    size_t len = j->n;
    if (snappy_uncompress((const char *)j->comp, j->comp_len, (char *)j->out, &len) != SNAPPY_OK)
        die("snappy_uncompress");
}
static void op_wk_block_validate(void *c)
{
    block_job *j = c;
    wk_error err;
    wk_in in = {j->comp, j->comp_len, 0};
    if (wk_eth_snappy_block_validate(&in, WK_ETH_SNAPPY_BLOCK_MAX, NULL, &err) != WK_OK)
        die(err.msg);
}

/* ---------------------------------------------------------------------------------------------
 * Framing format
 * ------------------------------------------------------------------------------------------- */
typedef struct frame_job {
    const uint8_t *raw;
    size_t n;
    uint8_t *stream; /* our framed encoding of raw */
    size_t stream_cap, stream_len;
    uint8_t *enc;    /* encoder output */
    size_t enc_len;
    uint8_t *out;    /* decoded */
    wk_eth_snappy_frame_encoder *e;
    wk_eth_snappy_frame_decoder *d;
    /* baseline: the 64 KiB pieces as bare blocks */
    size_t pieces;
    uint8_t *blocks;  /* compressed pieces, each at k * block_stride */
    size_t block_stride;
    size_t *block_len;
    size_t io;        /* push and view size of the streaming calls */
    uint8_t *scratch; /* one block (block_stride bytes) */
} frame_job;

/* A job decoding `stream` (or encoding raw[0..n) into `enc`, both stream_cap bytes) into `out`,
 * 64 KiB pushes and views; the baseline's fields are the caller's. */
static frame_job frame_job_make(const uint8_t *raw, size_t n, uint8_t *stream, size_t stream_cap,
                                uint8_t *enc, uint8_t *out, wk_eth_snappy_frame_decoder *d)
{
    frame_job j = {.raw = raw, .n = n, .stream = stream, .stream_cap = stream_cap, .enc = enc,
                   .out = out, .d = d, .io = PIECE};
    return j;
}

static void op_wk_frame_encode(void *c)
{
    frame_job *j = c;
    wk_error err;
    wk_eth_snappy_frame_encoder_reset(j->e);
    size_t pos = 0;
    for (size_t off = 0;; off += j->io) {
        bool last = off + j->io >= j->n;
        wk_in in = {j->raw + off, last ? j->n - off : j->io, 0};
        wk_result r;
        do {
            if (pos == j->stream_cap) die("framed stream too large");
            wk_out out = {j->enc + pos, min_sz(j->io, j->stream_cap - pos), 0};
            r = last ? wk_eth_snappy_frame_encoder_flush(j->e, &in, &out, &err)
                     : wk_eth_snappy_frame_encode(j->e, &in, &out, &err);
            pos += out.pos;
        } while (r == WK_NEED_OUTPUT);
        if (r != (last ? WK_DONE : WK_NEED_INPUT)) die("frame encode");
        if (last) break;
    }
    j->enc_len = pos;
}
static void op_wk_frame_encode_all(void *c)
{
    frame_job *j = c;
    wk_error err;
    wk_out out = {j->enc, j->stream_cap, 0};
    if (wk_eth_snappy_frame_encode_all(j->raw, j->n, &out, &err) != WK_DONE) die(err.msg);
    j->enc_len = out.pos;
}
/* The baseline compressor: every piece into one reused (cache-hot) block buffer. */
static void op_lib_pieces_compress(void *c)
{
    frame_job *j = c;
    for (size_t k = 0; k < j->pieces; k++) {
        size_t off = k * PIECE, len = j->block_stride;
        if (snappy_compress((const char *)j->raw + off, min_sz(PIECE, j->n - off),
                            (char *)j->scratch, &len) != SNAPPY_OK)
            die("snappy_compress");
        j->block_len[k] = len;
    }
}
/* The blocks the baseline decompressor reads (outside the timed region). */
static void lib_pieces_prepare(frame_job *j)
{
    for (size_t k = 0; k < j->pieces; k++) {
        size_t off = k * PIECE, len = j->block_stride;
        if (snappy_compress((const char *)j->raw + off, min_sz(PIECE, j->n - off),
                            (char *)j->blocks + k * j->block_stride, &len) != SNAPPY_OK)
            die("snappy_compress");
        j->block_len[k] = len;
    }
}
static void op_wk_frame_decode(void *c)
{
    frame_job *j = c;
    wk_error err;
    wk_eth_snappy_frame_decoder_reset(j->d);
    size_t ipos = 0, opos = 0;
    while (ipos < j->stream_len) {
        wk_in in = {j->stream + ipos, min_sz(j->io, j->stream_len - ipos), 0};
        wk_result r;
        do {
            wk_out out = {j->out + opos, min_sz(j->io, j->n + PIECE - opos), 0};
            r = wk_eth_snappy_frame_decode(j->d, &in, &out, &err);
            opos += out.pos;
        } while (r == WK_NEED_OUTPUT);
        if (r != WK_NEED_INPUT) die(err.msg);
        ipos += in.pos;
    }
    if (wk_eth_snappy_frame_decoder_finish(j->d, NULL, &err) != WK_DONE || opos != j->n) die("frame decode");
}
/* op_wk_frame_decode with a decoder created and freed per stream, as op_wk_rr creates its reader
 * (one per req/resp stream, as a client does): the framed decode the reader is measured against. */
static void op_wk_frame_decode_fresh(void *c)
{
    frame_job *j = c;
    wk_error err;
    wk_eth_snappy_frame_decoder *keep = j->d;
    j->d = wk_eth_snappy_frame_decoder_create(NULL, &err);
    if (!j->d) die(err.msg);
    op_wk_frame_decode(j);
    wk_eth_snappy_frame_decoder_destroy(j->d);
    j->d = keep;
}
static void op_lib_pieces_uncompress(void *c)
{
    frame_job *j = c;
    for (size_t k = 0; k < j->pieces; k++) {
        size_t len = PIECE;
        if (snappy_uncompress((const char *)j->blocks + k * j->block_stride, j->block_len[k],
                              (char *)j->out + k * PIECE, &len) != SNAPPY_OK)
            die("snappy_uncompress");
    }
}

/* ---------------------------------------------------------------------------------------------
 * CRC-32C
 * ------------------------------------------------------------------------------------------- */
typedef struct crc_job {
    const uint8_t *p;
    size_t n;
    volatile uint32_t sink;
} crc_job;

static void op_crc_isal(void *c)
{
    crc_job *j = c;
    j->sink = wk_eth_crc32c(j->p, j->n);
}
static void op_crc_table(void *c)
{
    crc_job *j = c;
    j->sink = wk_eth_crc32c_table(j->p, j->n);
}

/* The work a checksum-verifying decoder cannot avoid on incompressible data (0x01 chunks),
 * beside libsnappy's whole work for the same data as literal-only blocks (a copy): every 64 KiB
 * piece copied, or CRC-32C'd then copied, or both in 8 KiB steps while the piece is in L1. */
typedef struct copy_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t n;
    volatile uint32_t sink;
} copy_job;

static void op_copy_pieces(void *c)
{
    copy_job *j = c;
    for (size_t off = 0; off < j->n; off += PIECE)
        memcpy(j->dst + off, j->src + off, min_sz(PIECE, j->n - off));
}
static void op_crc_then_copy(void *c)
{
    copy_job *j = c;
    uint32_t acc = 0;
    for (size_t off = 0; off < j->n; off += PIECE) {
        size_t k = min_sz(PIECE, j->n - off);
        acc ^= wk_eth_crc32c(j->src + off, k);
        memcpy(j->dst + off, j->src + off, k);
    }
    j->sink = acc;
}
static void op_crc_copy_steps(void *c)
{
    copy_job *j = c;
    uint32_t acc = 0;
    for (size_t off = 0; off < j->n; off += PIECE) {
        size_t k = min_sz(PIECE, j->n - off);
        uint32_t crc = 0;
        for (size_t s = 0; s < k; s += 4096) { /* the step of the decoder's wk_eth_crc32c_copy */
            size_t m = min_sz(4096, k - s);
            crc = wk_eth_crc32c_update(crc, j->src + off + s, m);
            memcpy(j->dst + off + s, j->src + off + s, m);
        }
        acc ^= crc;
    }
    j->sink = acc;
}

/* ---------------------------------------------------------------------------------------------
 * Req/resp
 * ------------------------------------------------------------------------------------------- */
typedef struct rr_job {
    const uint8_t *chunk; /* the whole response stream */
    size_t chunk_len;
    size_t ssz_len;
    uint8_t *out;
    const uint8_t *blocks[8]; /* the framed stream's compressed blocks */
    size_t block_len[8], nblocks;
} rr_job;

static void op_wk_rr(void *c)
{
    rr_job *j = c;
    wk_error err;
    wk_eth_rr_reader_params o;
    memset(&o, 0, sizeof o);
    o.context_bytes = true;
    wk_eth_rr_reader *r = wk_eth_rr_reader_create(&o, &err);
    if (!r) die(err.msg);
    size_t ipos = 0, opos = 0;
    int ends = 0;
    while (ipos < j->chunk_len) {
        wk_in in = {j->chunk + ipos, min_sz(PIECE, j->chunk_len - ipos), 0};
        for (;;) {
            wk_out out = {j->out + opos, min_sz(PIECE, j->ssz_len + PIECE - opos), 0};
            wk_result res = wk_eth_rr_reader_read(r, &in, &out, &err);
            opos += out.pos;
            if (res == WK_ERROR) die(err.msg);
            if (res == WK_EVENT && wk_eth_rr_reader_event(r) == WK_ETH_RR_CHUNK_END) ends++;
            if (res == WK_NEED_INPUT) break;
        }
        ipos += in.pos;
    }
    if (wk_eth_rr_reader_finish(r, NULL, &err) != WK_DONE || ends != 1 || opos != j->ssz_len) die("rr read");
    wk_eth_rr_reader_destroy(r);
}
static void op_lib_rr(void *c)
{
    rr_job *j = c;
    size_t opos = 0;
    for (size_t k = 0; k < j->nblocks; k++) {
        size_t len = j->ssz_len - opos;
        if (snappy_uncompress((const char *)j->blocks[k], j->block_len[k], (char *)j->out + opos,
                              &len) != SNAPPY_OK)
            die("snappy_uncompress");
        opos += len;
    }
}

/* ---------------------------------------------------------------------------------------------
 * The golang/snappy baseline: tests/eth/go/snappy_peer.go built offline (Debian's
 * golang-github-golang-snappy-dev under /usr/share/gocode, as the interop test builds it) into
 * the bench's build directory, run in framed-time mode on each stream.
 * ------------------------------------------------------------------------------------------- */
#ifndef WK_SOURCE_DIR
#define WK_SOURCE_DIR "."
#endif
#ifndef WK_BENCH_DIR
#define WK_BENCH_DIR "."
#endif

/* Builds the peer (go build is quick when its cache is warm) and returns its path. */
static const char *go_peer_build(void)
{
    static char exe[4096];
    char cmd[16384];
    snprintf(exe, sizeof exe, "%s/eth_go_snappy_peer", WK_BENCH_DIR);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && env GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= "
             "GOCACHE='%s/gocache' CGO_ENABLED=0 HOME='%s' go build -o '%s' "
             "'%s/tests/eth/go/snappy_peer.go' 1>&2",
             WK_BENCH_DIR, WK_BENCH_DIR, WK_BENCH_DIR, exe, WK_SOURCE_DIR);
    if (system(cmd) != 0)
        die("cannot build the golang/snappy baseline (needs the go toolchain and "
            "golang-github-golang-snappy-dev: scripts/bootstrap installs them)");
    return exe;
}

static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* golang/snappy's framed Reader on stream[0..len): the median MB/s of `reps` timings, each at
 * least min_seconds (the peer's own clock); checks that it decoded exactly raw[0..n). */
static double go_reader_mbps(const char *peer, const uint8_t *stream, size_t len, int reps,
                             const uint8_t *raw, size_t n)
{
    char path[4096], cmd[8192];
    snprintf(path, sizeof path, "%s/eth_bench_stream.XXXXXX", WK_BENCH_DIR);
    int fd = mkstemp(path);
    if (fd < 0) die("mkstemp");
    FILE *f = fdopen(fd, "wb");
    if (!f || fwrite(stream, 1, len, f) != len || fclose(f) != 0) die("writing the peer's input");
    snprintf(cmd, sizeof cmd, "'%s' framed-time %d %g < '%s'", peer, reps, min_seconds, path);
    FILE *p = popen(cmd, "r");
    if (!p) die("popen");
    unsigned long long got_n = 0, got_h = 0;
    double mbps = 0;
    int k = fscanf(p, "%llu %llx %lf", &got_n, &got_h, &mbps);
    int rc = pclose(p);
    unlink(path);
    if (k != 3 || rc != 0) die("the golang/snappy peer failed");
    if (got_n != n || got_h != fnv1a64(raw, n)) die("golang/snappy decoded other bytes");
    return mbps;
}

/* ---------------------------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------------------------- */
typedef struct dataset {
    const char *name;
    uint8_t *raw;
    size_t n;
    const uint8_t *comp; /* the file's own compressed block, or NULL */
    size_t comp_len;
    bool framed;         /* also a framed row */
    uint8_t *own;        /* libsnappy's encoding when the file has no block (freed at the end) */
} dataset;

static const char *human(size_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0) snprintf(buf, cap, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0) snprintf(buf, cap, "%zu KiB", n >> 10);
    else snprintf(buf, cap, "%zu B", n);
    return buf;
}

/* Decodes a vector's compressed block with libsnappy (the bench's source of truth for its bytes)
 * and checks the length the manifest gives. */
static uint8_t *vector_block(const uint8_t *comp, size_t comp_len, size_t expect, size_t *n)
{
    size_t len;
    if (snappy_uncompressed_length((const char *)comp, comp_len, &len) != SNAPPY_OK ||
        len != expect)
        die("vector block: unexpected length");
    uint8_t *p = xmalloc(len);
    if (snappy_uncompress((const char *)comp, comp_len, (char *)p, &len) != SNAPPY_OK)
        die("vector block: libsnappy rejects it");
    *n = len;
    return p;
}

int main(int argc, char **argv)
{
    bench_size sz = {false, 11, 4};
    const char *shared = WK_VECTORS_DIR;
    int kernel = -1;
    for (int i = 1; i < argc; i++) {
        if (bench_size_opt(&sz, argc, argv, &i)) continue;
        if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
            const char *k = argv[++i];
            kernel = -2;
            for (int id = 0; id < NKERNELS; id++)
                if (strcmp(k, wk_eth_snappy__kernel_name(id)) == 0) kernel = id;
            if (strcmp(k, "auto") == 0) kernel = -1;
            if (kernel == -2) die("--kernel: portable, bmi2, avx2, avx512 or auto");
        }
        else if (strcmp(argv[i], "--vectors") == 0 && i + 1 < argc) shared = argv[++i];
        else return bench_usage("[--quick] [--reps N] [--mib N] [--vectors DIR] "
                                "[--kernel portable|bmi2|avx2|avx512|auto]");
    }
    size_t n = bench_size_apply(&sz, MAX_REPS, &min_seconds);
    int reps = sz.reps;
    bool quick = sz.quick;
    double t_start = now();

    /* ---- data ---- */
    dataset ds[16];
    size_t nds = 0;
    uint8_t *text = xmalloc(n), *js = xmalloc(n), *rb = xmalloc(n);
    english(text, n);
    json(js, n);
    random_bytes(rb, n);
    ds[nds++] = (dataset){"English-like text", text, n, NULL, 0, true, NULL};
    ds[nds++] = (dataset){"JSON-like records", js, n, NULL, 0, true, NULL};
    ds[nds++] = (dataset){"random bytes", rb, n, NULL, 0, true, NULL};
    struct {
        const char *name, *path;
        size_t decoded;
        bool hex, framed;
    } vecs[] = {
        {"Opticks text (Go block)", "snappy-block/golang-snappy/Isaac.Newton-Opticks.txt.rawsnappy",
         16472, false, false},
        {"SSZ Sepolia block 9552076 (ream)", "ssz_snappy-block/ream/child_9552076.ssz_snappy",
         65807, false, false},
        {"SSZ BlobSidecar (lambda, literals only)",
         "ssz_snappy-block/lambda_ethereum_consensus/blob_sidecar.ssz_snappy", 131928, false,
         false},
        {"SSZ BeaconState (lambda)",
         "ssz_snappy-block/lambda_ethereum_consensus/beacon_state.ssz_snappy", 11437, false, false},
        {RINKEBY, "devp2p/ethereumj/block.py.snappy",
         1522774, true, true},
    };
    size_t nvec = quick ? 2 : sizeof vecs / sizeof vecs[0];
    uint8_t *files[8] = {0};
    for (size_t v = 0; v < nvec; v++) {
        size_t flen, clen;
        uint8_t *f = read_file(shared, vecs[v].path, &flen);
        const uint8_t *comp = f;
        clen = flen;
        if (vecs[v].hex) {
            uint8_t *h = hex_decode(f, flen, &clen);
            free(f);
            f = h;
            comp = h;
        }
        files[v] = f;
        size_t dn;
        uint8_t *raw = vector_block(comp, clen, vecs[v].decoded, &dn);
        ds[nds++] = (dataset){vecs[v].name, raw, dn, comp, clen, vecs[v].framed, NULL};
    }
    /* the req/resp vector: SSZ bytes and Lodestar's framed stream */
    size_t ssz_len, framed_len;
    uint8_t *ssz = read_file(
        shared, "reqresp-framed/lodestar/goerliShadowForkBlock.13249/serialized.ssz", &ssz_len);
    uint8_t *framed = read_file(
        shared, "reqresp-framed/lodestar/goerliShadowForkBlock.13249/streamed.snappy", &framed_len);
    if (!quick)
        ds[nds++] = (dataset){BELLATRIX, ssz, ssz_len, NULL, 0, true, NULL};

    size_t maxn = 0;
    for (size_t i = 0; i < nds; i++)
        if (ds[i].n > maxn) maxn = ds[i].n;
    size_t enc_cap = (size_t)wk_eth_snappy_block_max_size(maxn);
    size_t stream_cap = (size_t)wk_eth_snappy_frame_max_size(maxn) + PIECE;
    uint8_t *comp_buf = xmalloc(enc_cap),
            *enc = xmalloc(enc_cap > stream_cap ? enc_cap : stream_cap);
    uint8_t *enc2 = xmalloc(enc_cap), *out = xmalloc(maxn + 2 * PIECE);
    uint8_t *stream = xmalloc(stream_cap);

    const char *go_peer = go_peer_build();
    int ran = wk_eth_snappy__set_kernel(kernel);
    if (kernel >= 0 && ran != kernel) die("--kernel: this CPU cannot run that kernel");
    printf("wirekit %s eth_bench: libsnappy (snappy-c), ISA-L crc32_iscsi, golang/snappy's "
           "framed Reader (%s); vectors %s\n",
           wk_version(), go_peer, shared);
    printf("block decoder kernel: %s (%s)\n", wk_eth_snappy__kernel_name(ran),
           kernel >= 0 ? "forced by --kernel" : "the library's run-time choice");
    printf("MB/s = 10^6 uncompressed bytes per second (CRC: GB/s = 10^9 input bytes per second), "
           "median of %d repetitions (each >= %.0f ms); ratio = median of the per-repetition "
           "speed ratios\n",
           reps, min_seconds * 1e3);

    /* ---- block ---- */
    double block_speed[16], block_ratio[16];
    printf("\n### Snappy block format (one block per data set)\n\n");
    printf(
        "| data | size | compressed/size | encode wirekit | encode libsnappy | ratio | same bytes "
        "| decode wirekit | decode libsnappy | ratio | validate (ours) | validate time / decode "
        "time |\n");
    printf("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
    for (size_t i = 0; i < nds; i++) {
        dataset *d = &ds[i];
        block_job j = {d->raw, d->n, NULL, 0, enc, enc_cap, 0, out};
        /* encoders: same bytes? */
        op_wk_block_encode(&j);
        size_t wl = j.enc_len;
        memcpy(enc2, enc, wl);
        op_lib_block_encode(&j);
        bool same = wl == j.enc_len && memcmp(enc2, enc, wl) == 0;
        pair pe = compare(op_wk_block_encode, &j, op_lib_block_encode, &j, (double)d->n, 1e6, reps);
        /* decoders read the file's own block, else libsnappy's encoding */
        if (d->comp) {
            j.comp = d->comp;
            j.comp_len = d->comp_len;
        } else { /* kept for the kernel table below */
            size_t cl = enc_cap;
            if (snappy_compress((const char *)d->raw, d->n, (char *)comp_buf, &cl) != SNAPPY_OK)
                die("snappy_compress");
            d->own = xmalloc(cl);
            memcpy(d->own, comp_buf, cl);
            d->comp = d->own;
            d->comp_len = cl;
            j.comp = d->comp;
            j.comp_len = cl;
        }
        memset(out, 0, d->n);
        op_wk_block_decode(&j);
        if (memcmp(out, d->raw, d->n) != 0) die("wirekit block decode mismatch");
        memset(out, 0, d->n);
        op_lib_block_decode(&j);
        if (memcmp(out, d->raw, d->n) != 0) die("libsnappy block decode mismatch");
        pair pd = compare(op_wk_block_decode, &j, op_lib_block_decode, &j, (double)d->n, 1e6, reps);
        block_speed[i] = pd.a;
        block_ratio[i] = pd.ratio;
        /* validate against our decode: ratio = decode speed / validate speed = time share */
        pair pv =
            compare(op_wk_block_validate, &j, op_wk_block_decode, &j, (double)d->n, 1e6, reps);
        char hb[32];
        printf("| %s | %s | %.3f | %.1f | %.1f | %.3f | %s | %.1f | %.1f | %.3f | %.1f | %.3f |\n",
               d->name, human(d->n, hb, sizeof hb), (double)j.comp_len / (double)d->n, pe.a, pe.b,
               pe.ratio, same ? "yes" : "no", pd.a, pd.b, pd.ratio, pv.a, 1.0 / pv.ratio);
        fflush(stdout);
    }

    /* ---- block decode per kernel ---- */
    printf("\n### Block decode by kernel (forced), beside libsnappy (MB/s; ratio = kernel / "
           "libsnappy)\n\n");
    int kern_ids[NKERNELS], nkern = 0;
    for (int k = 0; k < NKERNELS; k++)
        if (wk_eth_snappy__set_kernel(k) == k) kern_ids[nkern++] = k;
    printf("| data | libsnappy |");
    for (int k = 0; k < nkern; k++) printf(" %s | ratio |", wk_eth_snappy__kernel_name(kern_ids[k]));
    printf("\n|---|---:|");
    for (int k = 0; k < nkern; k++) printf("---:|---:|");
    printf("\n");
    for (size_t i = 0; i < nds; i++) {
        dataset *d = &ds[i];
        block_job j = {d->raw, d->n, d->comp, d->comp_len, enc, enc_cap, 0, out};
        pair pk[NKERNELS];
        for (int k = 0; k < nkern; k++) {
            wk_eth_snappy__set_kernel(kern_ids[k]);
            memset(out, 0, d->n);
            op_wk_block_decode(&j);
            if (memcmp(out, d->raw, d->n) != 0) die("kernel block decode mismatch");
            pk[k] = compare(op_wk_block_decode, &j, op_lib_block_decode, &j, (double)d->n, 1e6, reps);
        }
        double lib[NKERNELS];
        for (int k = 0; k < nkern; k++) lib[k] = pk[k].b;
        printf("| %s | %.1f |", d->name, median(lib, nkern));
        for (int k = 0; k < nkern; k++) printf(" %.1f | %.3f |", pk[k].a, pk[k].ratio);
        printf("\n");
        fflush(stdout);
    }
    wk_eth_snappy__set_kernel(kernel);

    /* ---- framed ---- */
    wk_error err;
    wk_eth_snappy_frame_encoder *fe = wk_eth_snappy_frame_encoder_create(NULL, &err);
    wk_eth_snappy_frame_decoder *fd = wk_eth_snappy_frame_decoder_create(NULL, &err);
    if (!fe || !fd) die("framing create");
    size_t stride = (size_t)wk_eth_snappy_block_max_size(PIECE);
    size_t max_pieces = (maxn + PIECE - 1) / PIECE;
    uint8_t *blocks = xmalloc(max_pieces * stride);
    size_t *block_len = xmalloc(max_pieces * sizeof *block_len);
    uint8_t *scratch = xmalloc(stride);
    struct {
        const char *name;
        size_t n, stream_len;
        pair enc_stream, enc_all, dec, big_enc, big_dec;
        double go;
        bool ok;
    } fr[16];
    size_t nfr = 0;
    bool frame_target = true;
    double rinkeby_framed = 0, bellatrix_block = 0, rinkeby_block = 0;
    for (size_t i = 0; i < nds; i++) {
        dataset *d = &ds[i];
        if (strcmp(d->name, RINKEBY) == 0) rinkeby_block = block_ratio[i];
        if (strcmp(d->name, BELLATRIX) == 0) bellatrix_block = block_speed[i];
        if (!d->framed) continue;
        frame_job j = frame_job_make(d->raw, d->n, stream, stream_cap, enc, out, fd);
        j.e = fe;
        j.pieces = (d->n + PIECE - 1) / PIECE;
        j.blocks = blocks;
        j.block_stride = stride;
        j.block_len = block_len;
        j.scratch = scratch;
        /* the stream the decoders read; streaming and one-shot encodings must be equal */
        op_wk_frame_encode_all(&j);
        memcpy(stream, enc, j.enc_len);
        j.stream_len = j.enc_len;
        op_wk_frame_encode(&j);
        if (j.enc_len != j.stream_len || memcmp(enc, stream, j.stream_len) != 0)
            die("streaming and one-shot framing differ");
        fr[nfr].name = d->name;
        fr[nfr].n = d->n;
        fr[nfr].stream_len = j.stream_len;
        fr[nfr].enc_stream =
            compare(op_wk_frame_encode, &j, op_lib_pieces_compress, &j, (double)d->n, 1e6, reps);
        fr[nfr].enc_all = compare(op_wk_frame_encode_all, &j, op_lib_pieces_compress, &j,
                                  (double)d->n, 1e6, reps);
        memset(out, 0, d->n);
        op_wk_frame_decode(&j);
        if (memcmp(out, d->raw, d->n) != 0) die("framed decode mismatch");
        lib_pieces_prepare(&j);
        memset(out, 0, d->n);
        op_lib_pieces_uncompress(&j);
        if (memcmp(out, d->raw, d->n) != 0) die("libsnappy pieces mismatch");
        fr[nfr].dec =
            compare(op_wk_frame_decode, &j, op_lib_pieces_uncompress, &j, (double)d->n, 1e6, reps);
        /* golang/snappy's Reader on the same stream, in its own process */
        fr[nfr].go = go_reader_mbps(go_peer, stream, j.stream_len, reps, d->raw, d->n);
        /* the same with 1 MiB pushes and views, where whole chunks fit (the fast paths) */
        j.io = BIG_IO;
        fr[nfr].big_enc =
            compare(op_wk_frame_encode, &j, op_lib_pieces_compress, &j, (double)d->n, 1e6, reps);
        memset(out, 0, d->n);
        op_wk_frame_decode(&j);
        if (memcmp(out, d->raw, d->n) != 0) die("framed decode mismatch (1 MiB views)");
        fr[nfr].big_dec =
            compare(op_wk_frame_decode, &j, op_lib_pieces_uncompress, &j, (double)d->n, 1e6, reps);
        fr[nfr].ok = fr[nfr].dec.ratio > 1.0 && fr[nfr].dec.a > fr[nfr].go;
        if (!fr[nfr].ok) frame_target = false;
        if (strcmp(d->name, RINKEBY) == 0) rinkeby_framed = fr[nfr].dec.ratio;
        fprintf(stderr, "eth_bench: framed %s done\n", d->name);
        nfr++;
    }
    wk_eth_snappy_frame_encoder_destroy(fe);

    printf("\n### Snappy framing format, encoding (64 KiB pushes and views) against libsnappy "
           "compressing the same 64 KiB pieces\n\n");
    printf("| data | size | framed/size | stream encode | encode_all | libsnappy pieces compress "
           "| stream/raw | encode_all/raw |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t k = 0; k < nfr; k++) {
        char hb[32];
        printf("| %s | %s | %.3f | %.1f | %.1f | %.1f | %.3f | %.3f |\n", fr[k].name,
               human(fr[k].n, hb, sizeof hb), (double)fr[k].stream_len / (double)fr[k].n,
               fr[k].enc_stream.a, fr[k].enc_all.a, fr[k].enc_stream.b, fr[k].enc_stream.ratio,
               fr[k].enc_all.ratio);
    }
    printf("\n### Snappy framing format, decoding (64 KiB pushes and views): wirekit, libsnappy on "
           "the same 64 KiB pieces (blocks, no checksums), golang/snappy's framed Reader on the "
           "same stream\n\n");
    printf("| data | decode wirekit | libsnappy pieces uncompress | wirekit/libsnappy | "
           "golang/snappy Reader | wirekit/Go | target: faster than both |\n");
    printf("|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t k = 0; k < nfr; k++)
        printf("| %s | %.1f | %.1f | %.3f | %.1f | %.3f | %s |\n", fr[k].name, fr[k].dec.a,
               fr[k].dec.b, fr[k].dec.ratio, fr[k].go, fr[k].dec.a / fr[k].go,
               fr[k].ok ? "met" : "MISSED");
    printf("\nThe same with 1 MiB pushes and views (whole chunks fit: no copy through the "
           "encoder's and decoder's own buffers):\n\n");
    printf(
        "| data | stream encode | libsnappy pieces compress | ratio | decode wirekit | libsnappy "
        "pieces uncompress | ratio | wirekit/Go |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t k = 0; k < nfr; k++)
        printf("| %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %.3f |\n", fr[k].name,
               fr[k].big_enc.a, fr[k].big_enc.b, fr[k].big_enc.ratio, fr[k].big_dec.a,
               fr[k].big_dec.b, fr[k].big_dec.ratio, fr[k].big_dec.a / fr[k].go);

    /* ---- CRC-32C ---- */
    printf("\n### CRC-32C\n\n");
    printf("| buffer | wk_eth_crc32c (ISA-L) GB/s | wk_eth_crc32c_table GB/s | ratio | ISA-L target >= 25 "
           "GB/s |\n");
    printf("|---:|---:|---:|---:|---|\n");
    bool crc_target = true;
    static const size_t crc_sizes[2] = {64u << 10, 1u << 20};
    for (int k = 0; k < 2; k++) {
        size_t cn = min_sz(crc_sizes[k], n);
        crc_job j = {rb, cn, 0};
        if (wk_eth_crc32c(rb, cn) != wk_eth_crc32c_table(rb, cn)) die("CRC-32C implementations disagree");
        pair pc = compare(op_crc_isal, &j, op_crc_table, &j, (double)cn, 1e9, reps);
        bool ok = pc.a >= 25.0;
        if (!ok) crc_target = false;
        char hb[32];
        printf("| %s | %.2f | %.2f | %.2f | %s |\n", human(cn, hb, sizeof hb), pc.a, pc.b, pc.ratio,
               ok ? "met" : "MISSED");
    }

    /* ---- the checksum's floor on incompressible data ---- */
    double floor_64k = 0, floor_1m = 0;
    {
        printf("\n### Checksum and copy of incompressible data, 64 KiB pieces (GB/s), and the "
               "framed decoder on the same bytes\n\n");
        printf("| data | copy (libsnappy's work on literal-only blocks) | CRC-32C then copy (the "
               "floor) | ratio to copy | CRC-32C and copy in 4 KiB steps | ratio to copy | framed "
               "decode, 64 KiB pushes | ratio to the floor | framed decode, 1 MiB pushes | ratio "
               "to the floor |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        uint8_t *cdst = xmalloc(n);
        copy_job cj = {rb, cdst, n, 0};
        pair p1 = compare(op_crc_then_copy, &cj, op_copy_pieces, &cj, (double)n, 1e9, reps);
        pair p2 = compare(op_crc_copy_steps, &cj, op_copy_pieces, &cj, (double)n, 1e9, reps);
        /* the framed decoder on the random bytes (its 0x01 chunks) beside the floor */
        frame_job j = frame_job_make(rb, n, stream, stream_cap, enc, out, fd);
        op_wk_frame_encode_all(&j);
        memcpy(stream, enc, j.enc_len);
        j.stream_len = j.enc_len;
        pair f1 = compare(op_wk_frame_decode, &j, op_crc_then_copy, &cj, (double)n, 1e9, reps);
        j.io = BIG_IO;
        pair f2 = compare(op_wk_frame_decode, &j, op_crc_then_copy, &cj, (double)n, 1e9, reps);
        if (memcmp(out, rb, n) != 0) die("framed decode mismatch (random bytes)");
        floor_64k = f1.ratio;
        floor_1m = f2.ratio;
        char hb[32];
        printf("| random bytes, %s | %.1f | %.1f | %.3f | %.1f | %.3f | %.1f | %.3f | %.1f | %.3f "
               "|\n",
               human(n, hb, sizeof hb), p1.b, p1.a, p1.ratio, p2.a, p2.ratio, f1.a, f1.ratio, f2.a,
               f2.ratio);
        free(cdst);
    }

    /* ---- req/resp ---- */
    printf("\n### Req/resp: one response chunk with the Bellatrix block (139405 SSZ bytes)\n\n");
    rr_job rj;
    memset(&rj, 0, sizeof rj);
    size_t chunk_len = 1 + 4 + 3 + framed_len;
    uint8_t *chunk = xmalloc(chunk_len);
    chunk[0] = 0;
    memcpy(chunk + 1, "\x44\x6a\x72\x32", 4);
    memcpy(chunk + 5, "\x8d\xc1\x08", 3);
    memcpy(chunk + 8, framed, framed_len);
    rj.chunk = chunk;
    rj.chunk_len = chunk_len;
    rj.ssz_len = ssz_len;
    rj.out = out;
    /* the framed stream's blocks, for the baseline */
    for (size_t pos = WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN; pos + 4 <= framed_len;) {
        size_t len =
            (size_t)framed[pos + 1] | (size_t)framed[pos + 2] << 8 | (size_t)framed[pos + 3] << 16;
        if (framed[pos] == 0x00) {
            if (rj.nblocks == 8) die("too many chunks");
            rj.blocks[rj.nblocks] = framed + pos + 8;
            rj.block_len[rj.nblocks++] = len - 4;
        } else if (framed[pos] != 0xff) {
            die("unexpected chunk type in the req/resp vector");
        }
        pos += 4 + len;
    }
    memset(out, 0, ssz_len);
    op_wk_rr(&rj);
    if (memcmp(out, ssz, ssz_len) != 0) die("req/resp decode mismatch");
    memset(out, 0, ssz_len);
    op_lib_rr(&rj);
    if (memcmp(out, ssz, ssz_len) != 0) die("libsnappy req/resp blocks mismatch");
    /* the same framed stream through the framing decoder alone (64 KiB pushes and views) */
    frame_job fj = frame_job_make(ssz, ssz_len, framed, framed_len, NULL, out, fd);
    fj.stream_len = framed_len;
    memset(out, 0, ssz_len);
    op_wk_frame_decode(&fj);
    if (memcmp(out, ssz, ssz_len) != 0) die("framed decode of streamed.snappy mismatch");
    pair pr = compare(op_wk_rr, &rj, op_lib_rr, &rj, (double)ssz_len, 1e6, reps);
    pair prf = compare(op_wk_rr, &rj, op_wk_frame_decode_fresh, &fj, (double)ssz_len, 1e6, reps);
    pair pfr = compare(op_wk_frame_decode, &fj, op_wk_frame_decode_fresh, &fj, (double)ssz_len, 1e6,
                       reps);
    double go_rr = go_reader_mbps(go_peer, framed, framed_len, reps, ssz, ssz_len);
    bool rr_ok = prf.ratio >= 0.95;
    printf("| stream | bytes | chunks | wk_eth_rr_reader MB/s | libsnappy blocks MB/s | ratio | "
           "framed decode of streamed.snappy MB/s | rr / framed | target rr >= 0.95 framed | "
           "framed decode, decoder reused (reset) MB/s | golang/snappy Reader on streamed.snappy "
           "MB/s | rr / Go |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
    printf("| 00 + context + 8d c1 08 + streamed.snappy | %zu | %zu compressed | %.1f | %.1f | "
           "%.3f | %.1f | %.3f | %s | %.1f | %.1f | %.3f |\n",
           chunk_len, rj.nblocks, pr.a, pr.b, pr.ratio, prf.b, prf.ratio, rr_ok ? "met" : "MISSED",
           pfr.a, go_rr, pr.a / go_rr);
    wk_eth_snappy_frame_decoder_destroy(fd);

    printf("\ntargets (block decoder kernel %s):\n", wk_eth_snappy__kernel_name(ran));
    printf("  framed decode faster than libsnappy on the same pieces and golang/snappy's Reader, "
           "64 KiB pushes, every corpus: %s",
           frame_target ? "met\n" : "MISSED on");
    for (size_t k = 0; k < nfr && !frame_target; k++)
        if (!fr[k].ok) printf(" [%s]", fr[k].name);
    if (!frame_target) printf("\n");
    printf("  Rinkeby RLP block >= 3x libsnappy: block decode %.2fx, framed decode %.2fx: %s\n",
           rinkeby_block, rinkeby_framed,
           quick ? "not measured (--quick)"
                 : rinkeby_block >= 3 && rinkeby_framed >= 3 ? "met" : "MISSED");
    printf("  incompressible data at the checksum floor (framed / CRC-32C then copy): 64 KiB "
           "pushes %.3f, 1 MiB pushes %.3f\n",
           floor_64k, floor_1m);
    printf("  Bellatrix block decode >= 10 GB/s: %.2f GB/s: %s\n", bellatrix_block / 1e3,
           quick ? "not measured (--quick)" : bellatrix_block >= 10e3 ? "met" : "MISSED");
    printf("  wk_eth_rr_reader within 5 %% of the framed decode of the same stream: %.3f: %s\n",
           prf.ratio, rr_ok ? "met" : "MISSED");
    printf("  ISA-L CRC-32C >= 25 GB/s: %s\n", crc_target ? "met" : "MISSED");
    printf("total time %.1f s\n", now() - t_start);

    for (size_t i = 0; i < nds; i++) free(ds[i].own);
    for (size_t i = 3; i < nds; i++)
        if (ds[i].raw != ssz) free(ds[i].raw);
    for (size_t v = 0; v < nvec; v++) free(files[v]);
    free(text);
    free(js);
    free(rb);
    free(ssz);
    free(framed);
    free(chunk);
    free(comp_buf);
    free(enc);
    free(enc2);
    free(out);
    free(stream);
    free(blocks);
    free(block_len);
    free(scratch);
    return 0;
}
