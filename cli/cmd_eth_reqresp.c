/* wirekit eth reqresp encode|decode: consensus req/resp ssz_snappy (spec 6) through the
 * library's chunk encoder and streaming request/response reader. */
#include "cmd_eth.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * wirekit eth reqresp encode
 * ------------------------------------------------------------------------------------------- */

int wk_cli_eth_reqresp_encode(int argc, char **argv)
{
    uint64_t result = 0;
    bool has_result = false, has_context = false;
    uint8_t context[WK_ETH_RR_CONTEXT_LEN];
    const char *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit eth reqresp encode [--result N [--context HEX8]]\n"
                   "Reads SSZ bytes from stdin and writes one req/resp ssz_snappy unit:\n"
                   "  (no --result)     a request payload: varint(n) || framed(ssz)\n"
                   "  --result N        a response chunk with result byte N (0..255):\n"
                   "                    N || [context] || varint(n) || framed(ssz)\n"
                   "  --context HEX8    4 context bytes (ForkDigest) as 8 hex digits; success\n"
                   "                    chunks (--result 0) only\n"
                   "Refused (exit 1): n above MAX_PAYLOAD_SIZE (SSZSNAPPY_ERR_LENGTH_BOUNDS), an error\n"
                   "chunk (N != 0) above 256 bytes (RESP_ERR_ERRMSG_TOO_LONG).\n");
            return WK_EXIT_OK;
        } else if (wk_cli_take(argc, argv, &i, "--result", &v)) {
            if (!eth_u64_opt("--result", v, 0, 255, &result)) return WK_EXIT_USAGE;
            has_result = true;
        } else if (wk_cli_take(argc, argv, &i, "--context", &v)) {
            if (!v || strlen(v) != 2 * WK_ETH_RR_CONTEXT_LEN ||
                wk_hex_decode(v, strlen(v), context, sizeof context) != WK_ETH_RR_CONTEXT_LEN)
                return wk_cli_usage("bad --context '%s' (8 hex digits)", v ? v : "");
            has_context = true;
        } else {
            return wk_cli_usage("wirekit eth reqresp encode: unknown or incomplete option '%s'", a);
        }
    }
    if (has_context && !(has_result && result == 0))
        return wk_cli_usage("wirekit eth reqresp encode: --context needs --result 0");
    size_t n;
    bool more;
    uint8_t *src = eth_read_input(WK_ETH_SSZ_MAX_PAYLOAD_SIZE + 1u, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc;
    if (more) {
        free(src);
        wk_error_set(&err, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, WK_NO_OFFSET,
                     "SSZ bytes above MAX_PAYLOAD_SIZE (%u)", WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
        return eth_fail_local(&err);
    }
    size_t cap = (size_t)wk_eth_rr_chunk_max_size(n);
    uint8_t *dst = malloc(cap);
    wk_out out = {dst, cap, 0};
    if (!dst) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate %zu bytes\n", cap);
        rc = WK_EXIT_USAGE;
    } else if (wk_eth_rr_encode(has_result ? (int)result : -1, has_context ? context : NULL, src, n,
                                &out, &err) != WK_DONE) {
        rc = eth_fail_local(&err); /* the sender's refusal: usage exit status */
    } else {
        rc = eth_put(dst, out.pos);
    }
    free(src);
    free(dst);
    return eth_finish_stdout(rc);
}

/* ---------------------------------------------------------------------------------------------
 * wirekit eth reqresp decode
 * ------------------------------------------------------------------------------------------- */

/* The stderr summary line of a completed chunk or request payload. */
static void report_chunk(const wk_eth_rr_reader_params *opt, const wk_eth_rr_chunk *c)
{
    if (opt->request) {
        fprintf(stderr, "request length=%llu\n", (unsigned long long)c->length);
        return;
    }
    fprintf(stderr, "chunk %llu result=%u", (unsigned long long)c->index, (unsigned)c->result);
    if (c->reserved_result) fprintf(stderr, " reserved");
    if (c->has_context) {
        char hex[2 * WK_ETH_RR_CONTEXT_LEN + 1];
        wk_hex_encode(c->context, WK_ETH_RR_CONTEXT_LEN, hex);
        fprintf(stderr, " context=%s", hex);
    }
    fprintf(stderr, " length=%llu\n", (unsigned long long)c->length);
}

int wk_cli_eth_reqresp_decode(int argc, char **argv)
{
    wk_eth_rr_reader_params opt;
    memset(&opt, 0, sizeof opt);
    const char *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit eth reqresp decode [--request [--empty-request]] [--context-bytes]\n"
                   "       [--min N] [--max N] [--allow-nonminimal] [--max-chunks N]\n"
                   "Reads one req/resp stream from stdin in 64 KiB reads: a response (chunks\n"
                   "result || [context] || varint(n) || framed(ssz) until EOF) or, with --request, one\n"
                   "request payload then EOF. Every payload (error chunks' ErrorMessage too) is\n"
                   "written to stdout as it is decoded (on an error, stdout holds the payload bytes\n"
                   "decoded before it); stderr gets one line per chunk once it checks:\n"
                   "  chunk I result=R [reserved] [context=HEX8] length=N   (reserved: R in 4..127)\n"
                   "  request length=N   (with --request: once the payload and the EOF after it check)\n"
                   "An error chunk (R != 0) ends a response: bytes after it are SSZSNAPPY_ERR_TRAILING.\n"
                   "  --request           read a request payload (bytes after it: SSZSNAPPY_ERR_TRAILING)\n"
                   "  --empty-request     (request) the method has no request content: empty input\n"
                   "  --context-bytes     (response) success chunks carry 4 context bytes\n"
                   "  --min N, --max N    SSZ bounds of the request / success payloads (0..10485760;\n"
                   "                      default none: MAX_PAYLOAD_SIZE); error chunks use [0, 256]\n"
                   "  --allow-nonminimal  accept non-minimal varint length prefixes\n"
                   "  --max-chunks N      (response) at most N chunks; bytes after the last one are\n"
                   "                      SSZSNAPPY_ERR_TRAILING (default unlimited)\n"
                   "Exit 0 ok, 2 invalid, 3 input ended early (SSZSNAPPY_ERR_EARLY_EOF), 1 usage.\n");
            return WK_EXIT_OK;
        }
        int t = eth_take_bounds(argc, argv, &i, &opt.bounds);
        if (t < 0) return WK_EXIT_USAGE;
        if (t > 0) continue;
        if (strcmp(a, "--request") == 0) {
            opt.request = true;
        } else if (strcmp(a, "--empty-request") == 0) {
            opt.empty_request = true;
        } else if (strcmp(a, "--context-bytes") == 0) {
            opt.context_bytes = true;
        } else if (strcmp(a, "--allow-nonminimal") == 0) {
            opt.allow_nonminimal = true;
        } else if (wk_cli_take(argc, argv, &i, "--max-chunks", &v)) {
            if (!eth_u64_opt("--max-chunks", v, 1, UINT64_MAX, &opt.max_chunks)) return WK_EXIT_USAGE;
        } else {
            return wk_cli_usage("wirekit eth reqresp decode: unknown or incomplete option '%s'", a);
        }
    }
    if (opt.empty_request && !opt.request)
        return wk_cli_usage("wirekit eth reqresp decode: --empty-request needs --request");
    if (opt.request && (opt.context_bytes || opt.max_chunks))
        return wk_cli_usage("wirekit eth reqresp decode: --context-bytes and --max-chunks are for responses");
    if (eth_check_bounds("reqresp decode", &opt.bounds)) return WK_EXIT_USAGE;

    wk_error err;
    wk_eth_rr_reader *r = wk_eth_rr_reader_create(&opt, &err);
    if (!r) return wk_cli_fail(&err);
    static uint8_t ibuf[ETH_IO_CHUNK], obuf[ETH_IO_CHUNK];
    int rc = 0;
    bool request_payload = false; /* a request payload began (not an empty request) */
    while (rc == 0) {
        size_t got; /* what has arrived; the output so far is flushed first */
        if ((rc = wk_cli_read_some(ibuf, sizeof ibuf, &got)) != 0 || got == 0) break; /* EOF */
        wk_in in = {ibuf, got, 0};
        wk_result res;
        do { /* every event is reported once; then a call with no input left says NEED_INPUT */
            wk_out out = {obuf, sizeof obuf, 0};
            res = wk_eth_rr_reader_read(r, &in, &out, &err);
            if ((rc = eth_put(obuf, out.pos)) != 0) break;
            wk_eth_rr_event ev = wk_eth_rr_reader_event(r);
            if (res == WK_ERROR) rc = wk_cli_fail(&err);
            else if (ev == WK_ETH_RR_CHUNK_BEGIN && opt.request) request_payload = true;
            else if (ev == WK_ETH_RR_CHUNK_END && !opt.request) report_chunk(&opt, wk_eth_rr_reader_chunk(r));
        } while (rc == 0 && res != WK_NEED_INPUT);
    }
    if (rc == 0 && wk_eth_rr_reader_finish(r, NULL, &err) != WK_DONE) rc = wk_cli_fail(&err);
    /* A request is reported once it is known complete: payload read and EOF right after it. */
    if (rc == 0 && request_payload) report_chunk(&opt, wk_eth_rr_reader_chunk(r));
    wk_eth_rr_reader_destroy(r);
    return eth_finish_stdout(rc);
}
