/* wirekit eth: Ethereum Snappy commands (include/wirekit/eth.h), stdin to stdout.
 * This file: the command table and dispatch, shared helpers, `eth snappy` and `eth rlp`.
 * The RLPx and gossip verbs are in cmd_eth_msg.c, the req/resp verbs in cmd_eth_reqresp.c. */
#include "cmd_eth.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------------------------------- */

int eth_put(const void *p, size_t n)
{
    if (!wk_cli_write(p, n)) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return 0;
}

int eth_finish_stdout(int rc)
{
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    return rc;
}

bool eth_stdin_has_more(void)
{
    int c = fgetc(stdin);
    return c != EOF;
}

uint8_t *eth_read_input(uint64_t limit, size_t *len, bool *more)
{
    size_t lim = limit > (uint64_t)(SIZE_MAX / 2) ? SIZE_MAX / 2 : (size_t)limit;
    size_t cap = lim < ETH_IO_CHUNK ? lim + 1 : ETH_IO_CHUNK, n = 0;
    uint8_t *buf = malloc(cap);
    *more = false;
    *len = 0;
    if (!buf) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate the input buffer\n");
        return NULL;
    }
    for (;;) {
        if (n == lim) {
            *more = eth_stdin_has_more();
            break;
        }
        if (n == cap) {
            size_t ncap = cap > lim / 2 ? lim : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fprintf(stderr, "WK_ERR_NOMEM: cannot allocate the input buffer\n");
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t want = cap - n;
        if (want > lim - n) want = lim - n;
        size_t got = fread(buf + n, 1, want, stdin);
        n += got;
        if (got == 0) break;
    }
    if (ferror(stdin)) {
        free(buf);
        fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n");
        return NULL;
    }
    *len = n;
    return buf;
}

int eth_fail_shift(wk_error *err, uint64_t shift)
{
    if (err->has_offset) err->offset += shift;
    return wk_cli_fail(err);
}

int eth_fail_status(const wk_error *err, int status)
{
    fflush(stdout); /* the output decoded before the error, then its line */
    char line[256];
    fprintf(stderr, "%s\n", wk_error_format(err, line, sizeof line));
    return status;
}

int eth_fail_local(const wk_error *err)
{
    return eth_fail_status(err, WK_EXIT_USAGE);
}

bool eth_u64_opt(const char *name, const char *val, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!val) {
        wk_cli_usage("%s needs a value", name);
        return false;
    }
    if (!wk_cli_parse_u64(val, min, max, out)) {
        wk_cli_usage("bad %s '%s' (a decimal in %llu..%llu)", name, val, (unsigned long long)min,
                     (unsigned long long)max);
        return false;
    }
    return true;
}

/* (cmd_eth.h) Parses --min / --max into *b; returns 1 when argv[*i] was one of them and was valid, -1 on a
 * usage error (printed), 0 when argv[*i] is something else. */
int eth_take_bounds(int argc, char **argv, int *i, wk_eth_ssz_bounds *b)
{
    const char *v;
    if (wk_cli_take(argc, argv, i, "--min", &v))
        return eth_u64_opt("--min", v, 0, WK_ETH_SSZ_MAX_PAYLOAD_SIZE, &b->min_len) ? 1 : -1;
    if (wk_cli_take(argc, argv, i, "--max", &v))
        return eth_u64_opt("--max", v, 1, WK_ETH_SSZ_MAX_PAYLOAD_SIZE, &b->max_len) ? 1 : -1;
    return 0;
}

int eth_check_bounds(const char *cmd, const wk_eth_ssz_bounds *b)
{
    if (b->max_len && b->min_len > b->max_len)
        return wk_cli_usage("wirekit eth %s: --min %llu is above --max %llu", cmd,
                            (unsigned long long)b->min_len, (unsigned long long)b->max_len);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit eth snappy compress|decompress
 * ------------------------------------------------------------------------------------------- */

#define SNAPPY_DEFAULT_MAX 16777216u

/* Block format: the whole of stdin as one block (at most 2^32-1 bytes). */
static int snappy_compress_block(void)
{
    size_t n;
    bool more;
    uint8_t *src = eth_read_input(WK_ETH_SNAPPY_BLOCK_MAX, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    if (more) {
        free(src);
        wk_error_set(&err, WK_ERR_ARG, WK_NO_OFFSET, "input above %lu bytes: too long for one block",
                     (unsigned long)WK_ETH_SNAPPY_BLOCK_MAX);
        return eth_fail_local(&err);
    }
    size_t cap = (size_t)wk_eth_snappy_block_max_size(n);
    uint8_t *dst = malloc(cap);
    wk_out out = {dst, cap, 0};
    int rc;
    if (!dst) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate %zu bytes\n", cap);
        rc = WK_EXIT_USAGE;
    } else if (wk_eth_snappy_block_encode(src, n, &out, &err) != WK_DONE) {
        rc = eth_fail_local(&err);
    } else {
        rc = eth_put(dst, out.pos);
    }
    free(src);
    free(dst);
    return eth_finish_stdout(rc);
}

/* Block format: stdin is one block whose declared length must be at most max. A block declaring
 * d bytes can be at most 5 + 6 * d bytes long (every element writes at least one byte and takes
 * at most 6 input bytes per byte written), so reading more than 6 + 6 * max bytes is never
 * needed: the validating pass over that prefix names the same failure as over the whole. */
static int snappy_decompress_block(uint64_t max)
{
    size_t n;
    bool more;
    uint8_t *src = eth_read_input(6 + 6 * max, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc;
    wk_in block = {src, n, 0};
    if (more) {
        if (wk_eth_snappy_block_validate(&block, max, NULL, &err) == WK_OK)
            wk_error_set(&err, WK_ERR_SNAPPY_OVERRUN, n, "input continues after a complete block");
        free(src);
        return wk_cli_fail(&err);
    }
    uint8_t *out = NULL;
    size_t out_len = 0;
    if (wk_eth_snappy_block_decode_alloc(&block, max, NULL, &out, &out_len, &err) != WK_DONE)
        rc = wk_cli_fail(&err);
    else
        rc = eth_put(out, out_len);
    free(src);
    free(out);
    return eth_finish_stdout(rc);
}

/* Framing format: streams stdin through the frame encoder in 64 KiB reads. */
static int snappy_compress_framed(void)
{
    wk_error err;
    wk_eth_snappy_frame_encoder *e = wk_eth_snappy_frame_encoder_create(NULL, &err);
    if (!e) return wk_cli_fail(&err);
    static uint8_t ibuf[ETH_IO_CHUNK], obuf[2 * ETH_IO_CHUNK];
    int rc = 0;
    bool eof = false;
    while (!eof && rc == 0) {
        size_t got = fread(ibuf, 1, sizeof ibuf, stdin);
        if (got < sizeof ibuf) {
            if (ferror(stdin)) {
                fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n");
                rc = WK_EXIT_USAGE;
                break;
            }
            eof = true;
        }
        wk_in in = {ibuf, got, 0};
        wk_result r;
        do {
            wk_out out = {obuf, sizeof obuf, 0};
            r = eof ? wk_eth_snappy_frame_encoder_flush(e, &in, &out, &err)
                    : wk_eth_snappy_frame_encode(e, &in, &out, &err);
            if (r == WK_ERROR) {
                rc = wk_cli_fail(&err);
                break;
            }
            if ((rc = eth_put(obuf, out.pos))) break;
        } while (r == WK_NEED_OUTPUT);
    }
    wk_eth_snappy_frame_encoder_destroy(e);
    return eth_finish_stdout(rc);
}

/* Framing format: streams stdin through the frame decoder in 64 KiB reads, never holding more
 * than one read of input. With has_max the output is bounded (the decoder's output limit). */
static int snappy_decompress_framed(bool has_max, uint64_t max)
{
    wk_error err;
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(NULL, &err);
    if (!d) return wk_cli_fail(&err);
    if (has_max) wk_eth_snappy_frame_decoder_set_output_limit(d, max);
    static uint8_t ibuf[ETH_IO_CHUNK], obuf[2 * ETH_IO_CHUNK];
    int rc = 0;
    bool done = false;
    while (rc == 0 && !done) {
        size_t got; /* what has arrived; the output so far is flushed first */
        if ((rc = wk_cli_read_some(ibuf, sizeof ibuf, &got)) != 0 || got == 0) break; /* EOF */
        wk_in in = {ibuf, got, 0};
        wk_result r;
        do {
            wk_out out = {obuf, sizeof obuf, 0};
            r = wk_eth_snappy_frame_decode(d, &in, &out, &err);
            if ((rc = eth_put(obuf, out.pos))) break;
            if (r == WK_ERROR) {
                fflush(stdout);
                rc = wk_cli_fail(&err);
            }
        } while (rc == 0 && r == WK_NEED_OUTPUT);
        if (rc == 0 && r == WK_DONE) {
            /* The output reached --max at a chunk boundary: the stream must end here. */
            if (in.pos < in.size || eth_stdin_has_more()) {
                wk_error_set(&err, WK_ERR_SSZSNAPPY_EXCESS_DATA, wk_eth_snappy_frame_decoder_consumed(d),
                             "input continues after the %llu output bytes allowed by --max",
                             (unsigned long long)max);
                rc = wk_cli_fail(&err);
            }
            done = true;
        }
    }
    if (rc == 0 && wk_eth_snappy_frame_decoder_finish(d, NULL, &err) != WK_DONE) {
        fflush(stdout);
        rc = wk_cli_fail(&err);
    }
    wk_eth_snappy_frame_decoder_destroy(d);
    return eth_finish_stdout(rc);
}

static int snappy_verb(int argc, char **argv, bool compress)
{
    bool framed = false, has_max = false;
    uint64_t max = SNAPPY_DEFAULT_MAX;
    const char *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            if (compress)
                printf("usage: wirekit eth snappy compress [--framed]\n"
                       "Compresses stdin to stdout.\n"
                       "  (default)   Snappy block format: the whole of stdin (at most 2^32-1 bytes)\n"
                       "              as one block, through libsnappy.\n"
                       "  --framed    Snappy framing format, streamed in 64 KiB reads: the stream\n"
                       "              identifier, then one chunk per 65536 input bytes (compressed when\n"
                       "              that saves 1/8); empty input gives empty output.\n");
            else
                printf("usage: wirekit eth snappy decompress [--framed] [--max N]\n"
                       "Decompresses stdin to stdout. Exit 0 ok, 2 invalid input, 3 input ended early,\n"
                       "1 usage; errors are one stderr line `NAME at offset N: message`.\n"
                       "  (default)   Snappy block format: stdin is one whole block; its preamble is\n"
                       "              checked against --max before any output is allocated.\n"
                       "  --framed    Snappy framing format, streamed in 64 KiB reads (memory bounded\n"
                       "              by one chunk); EOF must fall on a chunk boundary.\n"
                       "  --max N     block: largest accepted declared length (0..4294967295, default\n"
                       "              16777216; above it: SNAPPY_ERR_TOO_LARGE at offset 0).\n"
                       "              framed: at most N output bytes in total (default unlimited); a\n"
                       "              chunk going past N fails with SSZSNAPPY_ERR_EXCESS_DATA, and once\n"
                       "              exactly N bytes are out the input must end there.\n");
            return WK_EXIT_OK;
        } else if (strcmp(a, "--framed") == 0) {
            framed = true;
        } else if (!compress && wk_cli_take(argc, argv, &i, "--max", &v)) {
            if (!eth_u64_opt("--max", v, 0, UINT64_MAX, &max)) return WK_EXIT_USAGE;
            has_max = true;
        } else {
            return wk_cli_usage("wirekit eth snappy %s: unknown or incomplete option '%s'", argv[0], a);
        }
    }
    if (compress) return framed ? snappy_compress_framed() : snappy_compress_block();
    if (framed) return snappy_decompress_framed(has_max, max);
    if (max > WK_ETH_SNAPPY_BLOCK_MAX)
        return wk_cli_usage("wirekit eth snappy decompress: block --max is at most 4294967295");
    return snappy_decompress_block(max);
}

static int cmd_snappy_compress(int argc, char **argv) { return snappy_verb(argc, argv, true); }
static int cmd_snappy_decompress(int argc, char **argv) { return snappy_verb(argc, argv, false); }

/* ---------------------------------------------------------------------------------------------
 * wirekit eth rlp decode
 * ------------------------------------------------------------------------------------------- */

#define RLP_MAX_DEPTH WK_ETH_RLP_MAX_DEPTH /* 256: the library's fixed stack */
#define RLP_MAX_INPUT (256u << 20)

/* Writes p[0..n) as lowercase hex to stdout through a small buffer. */
static void put_hex(const uint8_t *p, size_t n)
{
    char buf[2 * 2048 + 1];
    while (n) {
        size_t k = n < 2048 ? n : 2048;
        wk_hex_encode(p, k, buf);
        fwrite(buf, 1, 2 * k, stdout);
        p += k;
        n -= k;
    }
}

/* Prints the item at p[0..n) as JSON (strings "0x<hex>", lists arrays); p[0..n) has passed
 * wk_eth_rlp_check, so every header reads and the nesting is at most RLP_MAX_DEPTH deep. Returns the
 * item's encoded length. */
static size_t print_rlp_json(const uint8_t *p, size_t n)
{
    wk_eth_rlp_item item;
    wk_error err;
    if (wk_eth_rlp_read_header(&(wk_in){p, n, 0}, &item, &err) != WK_OK)
        return n; /* not reached after the check */
    const uint8_t *payload = p + item.header_len;
    if (!item.is_list) {
        fputs("\"0x", stdout);
        put_hex(payload, item.payload_len);
        fputc('"', stdout);
    } else {
        fputc('[', stdout);
        size_t at = 0;
        while (at < item.payload_len) {
            if (at) fputc(',', stdout);
            at += print_rlp_json(payload + at, item.payload_len - at);
        }
        fputc(']', stdout);
    }
    return item.header_len + item.payload_len;
}

static int cmd_rlp_decode(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit eth rlp decode [--json]\n"
                   "Checks that stdin (at most 256 MiB) is exactly one canonical RLP item: canonical\n"
                   "sizes, lists filled exactly by their items, nesting at most 256 deep, nothing\n"
                   "after the item. Prints `string length=N` or `list length=N items=K` (N = payload\n"
                   "bytes, K = direct items), or with --json the item as JSON: strings as \"0x<hex>\",\n"
                   "lists as arrays. Exit 0 ok, 2 invalid (RLP_ERR_*), 3 truncated (RLP_ERR_TRUNCATED).\n");
            return WK_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            return wk_cli_usage("wirekit eth rlp decode: unknown option '%s'", argv[i]);
        }
    }
    size_t n;
    bool more;
    uint8_t *src = eth_read_input(RLP_MAX_INPUT, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc = 0;
    if (more) {
        wk_error_set(&err, WK_ERR_ARG, WK_NO_OFFSET, "input above %u bytes", RLP_MAX_INPUT);
        rc = eth_fail_local(&err);
    } else if (wk_eth_rlp_check(&(wk_in){src, n, 0}, RLP_MAX_DEPTH, &err) != WK_OK) {
        rc = wk_cli_fail(&err);
    } else if (json) {
        print_rlp_json(src, n);
        fputc('\n', stdout);
    } else {
        wk_eth_rlp_item item;
        if (wk_eth_rlp_read_header(&(wk_in){src, n, 0}, &item, &err) != WK_OK) {
            rc = wk_cli_fail(&err);
        } else if (!item.is_list) {
            printf("string length=%zu\n", item.payload_len);
        } else {
            size_t at = 0, items = 0;
            const uint8_t *payload = src + item.header_len;
            while (at < item.payload_len) {
                wk_eth_rlp_item sub;
                wk_in rest = {payload, item.payload_len, at};
                if (wk_eth_rlp_read_header(&rest, &sub, &err) != WK_OK) break;
                at += sub.header_len + sub.payload_len;
                items++;
            }
            printf("list length=%zu items=%zu\n", item.payload_len, items);
        }
    }
    free(src);
    return eth_finish_stdout(rc);
}

/* ---------------------------------------------------------------------------------------------
 * Dispatch: `wirekit eth GROUP VERB [options]`
 * ------------------------------------------------------------------------------------------- */

typedef struct eth_command {
    const char *group;
    const char *verb;
    const char *summary;
    int (*run)(int argc, char **argv);
} eth_command;

static const eth_command commands[] = {
    {"snappy", "compress", "[--framed]: stdin to a Snappy block (or framed stream) on stdout",
     cmd_snappy_compress},
    {"snappy", "decompress", "[--framed] [--max N]: Snappy block (or framed stream) to its bytes",
     cmd_snappy_decompress},
    {"rlpx", "encode", "--msg-id N [--no-compress]: msg-data to frame-size(3) || frame-data",
     wk_cli_eth_rlpx_encode},
    {"rlpx", "decode", "[--frame-data] [--no-compress] [--max N]: frame to msg-data, msg-id on stderr",
     wk_cli_eth_rlpx_decode},
    {"gossip", "encode", "[--min N] [--max N]: SSZ bytes to gossip Message.data (Snappy block)",
     wk_cli_eth_gossip_encode},
    {"gossip", "decode", "[--min N] [--max N] [--message-id [--topic T]]: Message.data to SSZ bytes",
     wk_cli_eth_gossip_decode},
    {"reqresp", "encode", "[--result N] [--context HEX8]: SSZ bytes to one request payload or chunk",
     wk_cli_eth_reqresp_encode},
    {"reqresp", "decode", "[--request] [--context-bytes] [...]: payloads to stdout, chunks on stderr",
     wk_cli_eth_reqresp_decode},
    {"rlp", "decode", "[--json]: check one canonical RLP item; --json prints its structure",
     cmd_rlp_decode},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const char ETH_SUMMARY[] =
    "Ethereum Snappy: snappy block/framed, RLPx frame-data, gossip and req/resp ssz_snappy";

/* Lists the commands (of one group, or all when group is NULL). */
static void eth_list(FILE *f, const char *group)
{
    char name[32];
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (group && strcmp(group, commands[i].group) != 0) continue;
        snprintf(name, sizeof name, "%s %s", commands[i].group, commands[i].verb);
        fprintf(f, "  wirekit eth %-18s %s\n", name, commands[i].summary);
    }
}

static int eth_help(FILE *f, const char *group, int status)
{
    fprintf(f, "usage: wirekit eth %s VERB [options]   (stdin to stdout)\n%s\n\ncommands:\n",
            group ? group : "GROUP", ETH_SUMMARY);
    eth_list(f, group);
    fprintf(f, "\nRun 'wirekit eth GROUP VERB --help' for a command's options. Exit status: 0 ok,\n"
               "1 usage or local failure, 2 invalid input, 3 input ended early; errors are one\n"
               "stderr line `NAME at offset N: message` with the spec's error names.\n");
    return status;
}

int wk_cli_eth(int argc, char **argv)
{
    if (argc < 2) return eth_help(stderr, NULL, WK_EXIT_USAGE);
    if (wk_cli_is_help(argv[1])) return eth_help(stdout, NULL, WK_EXIT_OK);
    bool known_group = false;
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].group) == 0) known_group = true;
    if (!known_group)
        return wk_cli_usage("unknown command 'wirekit eth %s' (see 'wirekit eth --help')", argv[1]);
    if (argc < 3) return eth_help(stderr, argv[1], WK_EXIT_USAGE);
    if (wk_cli_is_help(argv[2])) return eth_help(stdout, argv[1], WK_EXIT_OK);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].group) == 0 && strcmp(argv[2], commands[i].verb) == 0)
            return commands[i].run(argc - 2, argv + 2);
    return wk_cli_usage("unknown command 'wirekit eth %s %s' (see 'wirekit eth %s --help')", argv[1],
                        argv[2], argv[1]);
}
