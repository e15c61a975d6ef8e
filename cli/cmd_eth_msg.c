/* wirekit eth rlpx encode|decode and wirekit eth gossip encode|decode: drive the library's RLPx
 * frame-data (spec 4) and gossip ssz_snappy (spec 5) functions on the whole of stdin. */
#include "cmd_eth.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * wirekit eth rlpx encode
 * ------------------------------------------------------------------------------------------- */

int wk_cli_eth_rlpx_encode(int argc, char **argv)
{
    uint64_t msg_id = 0;
    bool has_id = false, compress = true;
    const char *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit eth rlpx encode --msg-id N [--no-compress]\n"
                   "Reads msg-data (the message's RLP) from stdin and writes frame-size (3 bytes,\n"
                   "big-endian) || frame-data, where frame-data = RLP(msg-id) || snappy_block(msg-data)\n"
                   "(devp2p p2p version 5). Hello (msg-id 0) is always written plain.\n"
                   "  --msg-id N       message id, 0..18446744073709551615\n"
                   "  --no-compress    write msg-data plain (a peer below p2p version 5)\n"
                   "msg-data above 16777215 bytes is refused (RLPX_ERR_TOO_LARGE, exit 1).\n");
            return WK_EXIT_OK;
        } else if (wk_cli_take(argc, argv, &i, "--msg-id", &v)) {
            if (!eth_u64_opt("--msg-id", v, 0, UINT64_MAX, &msg_id)) return WK_EXIT_USAGE;
            has_id = true;
        } else if (strcmp(a, "--no-compress") == 0) {
            compress = false;
        } else {
            return wk_cli_usage("wirekit eth rlpx encode: unknown or incomplete option '%s'", a);
        }
    }
    if (!has_id) return wk_cli_usage("wirekit eth rlpx encode: --msg-id is required");
    size_t n;
    bool more;
    /* One byte above the send limit reaches the library, which names the refusal. */
    uint8_t *src = eth_read_input(WK_ETH_RLPX_MAX_SEND_DATA + 1u, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc;
    if (more) {
        free(src);
        wk_error_set(&err, WK_ERR_RLPX_TOO_LARGE, WK_NO_OFFSET, "msg-data above %u bytes",
                     WK_ETH_RLPX_MAX_SEND_DATA);
        return eth_fail_local(&err);
    }
    size_t cap = (size_t)wk_eth_rlpx_max_size(n);
    uint8_t *dst = malloc(cap);
    wk_out out = {dst, cap, 0};
    if (!dst) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate %zu bytes\n", cap);
        rc = WK_EXIT_USAGE;
    } else if (wk_eth_rlpx_encode(msg_id, src, n, compress, &out, &err) != WK_DONE) {
        rc = eth_fail_local(&err); /* the sender's refusal: usage exit status */
    } else {
        rc = eth_put(dst, out.pos);
    }
    free(src);
    free(dst);
    return eth_finish_stdout(rc);
}

/* ---------------------------------------------------------------------------------------------
 * wirekit eth rlpx decode
 * ------------------------------------------------------------------------------------------- */

int wk_cli_eth_rlpx_decode(int argc, char **argv)
{
    bool bare = false, compress = true;
    uint64_t max = 0; /* 0 = the library default, WK_ETH_RLPX_DEFAULT_MAX_DATA */
    const char *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit eth rlpx decode [--frame-data] [--no-compress] [--max N]\n"
                   "Reads what `rlpx encode` writes: frame-size (3 bytes, big-endian) followed by\n"
                   "exactly frame-size bytes of frame-data; writes msg-data to stdout and the line\n"
                   "`msg-id N` to stderr. Offsets in errors count from the first byte of stdin.\n"
                   "  --frame-data     stdin is bare frame-data (no frame-size bytes)\n"
                   "  --no-compress    msg-data is plain (p2p version below 5); Hello (msg-id 0) is\n"
                   "                   always read plain\n"
                   "  --max N          largest accepted msg-data, 1..4294967295 (default 16777216;\n"
                   "                   geth's limit is 16777215); above it: RLPX_ERR_TOO_LARGE\n"
                   "frame-size mismatches are RLPX_ERR_FRAME_SIZE: fewer bytes than frame-size (or\n"
                   "fewer than 3) exit 3 at the end of input; bytes after frame-data exit 2 at the\n"
                   "first extra byte. Exit 0 ok, 2 invalid, 3 input ended early, 1 usage.\n");
            return WK_EXIT_OK;
        } else if (strcmp(a, "--frame-data") == 0) {
            bare = true;
        } else if (strcmp(a, "--no-compress") == 0) {
            compress = false;
        } else if (wk_cli_take(argc, argv, &i, "--max", &v)) {
            if (!eth_u64_opt("--max", v, 1, WK_ETH_SNAPPY_BLOCK_MAX, &max)) return WK_EXIT_USAGE;
        } else {
            return wk_cli_usage("wirekit eth rlpx decode: unknown or incomplete option '%s'", a);
        }
    }
    size_t hdr = bare ? 0 : 3, n;
    bool more;
    uint8_t *src = eth_read_input(hdr + WK_ETH_RLPX_FRAME_SIZE_MAX, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc = 0;
    size_t fd_len = bare ? n : 0;
    if (bare) {
        if (more) {
            wk_error_set(&err, WK_ERR_RLPX_FRAME_SIZE, WK_ETH_RLPX_FRAME_SIZE_MAX,
                         "frame-data longer than %u bytes", WK_ETH_RLPX_FRAME_SIZE_MAX);
            rc = wk_cli_fail(&err);
        }
    } else if (n < 3) {
        wk_error_set(&err, WK_ERR_RLPX_FRAME_SIZE, n, "input ended inside the 3-byte frame-size");
        rc = eth_fail_status(&err, WK_EXIT_TRUNCATED);
    } else {
        size_t fs = ((size_t)src[0] << 16) | ((size_t)src[1] << 8) | src[2];
        if (n - 3 < fs) {
            wk_error_set(&err, WK_ERR_RLPX_FRAME_SIZE, n,
                         "input ended after %zu of the %zu frame-data bytes of frame-size", n - 3, fs);
            rc = eth_fail_status(&err, WK_EXIT_TRUNCATED);
        } else if (n - 3 > fs || more) {
            wk_error_set(&err, WK_ERR_RLPX_FRAME_SIZE, 3 + fs,
                         "bytes after the %zu frame-data bytes of frame-size", fs);
            rc = wk_cli_fail(&err);
        }
        fd_len = fs;
    }
    uint8_t *dst = NULL;
    wk_eth_rlpx_message msg;
    wk_in fd = {src + hdr, fd_len, 0};
    if (rc == 0 && wk_eth_rlpx_parse(&fd, compress, max, &msg, &err) != WK_OK)
        rc = eth_fail_shift(&err, hdr);
    if (rc == 0 && !(dst = malloc(msg.data_len ? msg.data_len : 1))) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate %zu bytes\n", msg.data_len);
        rc = WK_EXIT_USAGE;
    }
    wk_out mo = {dst, msg.data_len, 0}; /* exactly the parsed length: never NEED_OUTPUT */
    if (rc == 0 && wk_eth_rlpx_decode(&msg, &fd, &mo, &err) != WK_DONE)
        rc = eth_fail_shift(&err, hdr);
    if (rc == 0 && (rc = eth_put(dst, msg.data_len)) == 0)
        fprintf(stderr, "msg-id %llu\n", (unsigned long long)msg.msg_id);
    free(src);
    free(dst);
    return eth_finish_stdout(rc);
}

/* ---------------------------------------------------------------------------------------------
 * wirekit eth gossip encode|decode
 * ------------------------------------------------------------------------------------------- */

#define BOUNDS_HELP                                                                                \
    "  --min N          SSZ type minimum length (0..10485760, default 0)\n"                       \
    "  --max N          SSZ type maximum length (1..10485760, default: no type bound,\n"          \
    "                   MAX_PAYLOAD_SIZE = 10485760 applies)\n"

int wk_cli_eth_gossip_encode(int argc, char **argv)
{
    wk_eth_ssz_bounds b = {0, 0};
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit eth gossip encode [--min N] [--max N]\n"
                   "Reads SSZ bytes from stdin and writes the gossipsub Message.data: one Snappy\n"
                   "block. The sender checks refuse a length outside the bounds\n"
                   "(SSZSNAPPY_ERR_LENGTH_BOUNDS) or above MAX_PAYLOAD_SIZE (SNAPPY_ERR_TOO_LARGE),\n"
                   "exit 1.\n" BOUNDS_HELP);
            return WK_EXIT_OK;
        }
        int t = eth_take_bounds(argc, argv, &i, &b);
        if (t < 0) return WK_EXIT_USAGE;
        if (t == 0) return wk_cli_usage("wirekit eth gossip encode: unknown or incomplete option '%s'", argv[i]);
    }
    if (eth_check_bounds("gossip encode", &b)) return WK_EXIT_USAGE;
    size_t n;
    bool more;
    uint8_t *src = eth_read_input(WK_ETH_SSZ_MAX_PAYLOAD_SIZE + 1u, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc;
    if (more) {
        free(src);
        wk_error_set(&err, WK_ERR_SNAPPY_TOO_LARGE, WK_NO_OFFSET, "SSZ bytes above MAX_PAYLOAD_SIZE (%u)",
                     WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
        return eth_fail_local(&err);
    }
    size_t cap = (size_t)wk_eth_snappy_block_max_size(n);
    uint8_t *dst = malloc(cap);
    wk_out out = {dst, cap, 0};
    if (!dst) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate %zu bytes\n", cap);
        rc = WK_EXIT_USAGE;
    } else if (wk_eth_gossip_encode(src, n, &b, &out, &err) != WK_DONE) {
        rc = eth_fail_local(&err); /* the sender's refusal: usage exit status */
    } else {
        rc = eth_put(dst, out.pos);
    }
    free(src);
    free(dst);
    return eth_finish_stdout(rc);
}

int wk_cli_eth_gossip_decode(int argc, char **argv)
{
    wk_eth_ssz_bounds b = {0, 0};
    bool message_id = false;
    const char *topic = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit eth gossip decode [--min N] [--max N] [--message-id [--topic T]]\n"
                   "Reads a gossipsub Message.data (one Snappy block) from stdin and writes the SSZ\n"
                   "bytes. Checked before decoding: its length (at most 12233418 bytes, else\n"
                   "GOSSIP_ERR_COMPRESSED_TOO_LARGE), the preamble (SNAPPY_ERR_TOO_LARGE above\n"
                   "MAX_PAYLOAD_SIZE, SSZSNAPPY_ERR_LENGTH_BOUNDS outside the type bounds).\n" BOUNDS_HELP
                   "  --message-id     also print `message-id HEX valid|invalid` on stderr (first):\n"
                   "                   the 20-byte gossipsub message-id, valid or invalid snappy domain\n"
                   "  --topic T        the topic for an Altair-and-later message-id (without it: the\n"
                   "                   phase 0 form)\n"
                   "Exit 0 ok, 2 invalid, 3 input ended early, 1 usage.\n");
            return WK_EXIT_OK;
        }
        int t = eth_take_bounds(argc, argv, &i, &b);
        if (t < 0) return WK_EXIT_USAGE;
        if (t > 0) continue;
        if (strcmp(a, "--message-id") == 0) {
            message_id = true;
        } else if (wk_cli_take(argc, argv, &i, "--topic", &topic)) {
            if (!topic) return wk_cli_usage("--topic needs a value");
        } else {
            return wk_cli_usage("wirekit eth gossip decode: unknown or incomplete option '%s'", a);
        }
    }
    if (topic && !message_id) return wk_cli_usage("wirekit eth gossip decode: --topic needs --message-id");
    if (eth_check_bounds("gossip decode", &b)) return WK_EXIT_USAGE;
    /* Message.data can never be longer than max_message_size(): read at most that (enough for
     * the message-id of any data a gossipsub frame can carry). */
    size_t n;
    bool more;
    uint8_t *src = eth_read_input(WK_ETH_GOSSIP_MAX_MESSAGE_SIZE, &n, &more);
    if (!src) return WK_EXIT_USAGE;
    wk_error err;
    int rc = 0;
    if (more) {
        wk_error_set(&err, WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE, WK_ETH_GOSSIP_MAX_COMPRESSED,
                     "Message.data above max_message_size() = %u bytes", WK_ETH_GOSSIP_MAX_MESSAGE_SIZE);
        free(src);
        return wk_cli_fail(&err);
    }
    if (message_id) {
        uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN];
        char hex[2 * WK_ETH_GOSSIP_MESSAGE_ID_LEN + 1];
        bool valid = false;
        if (wk_eth_gossip_message_id(&(wk_in){src, n, 0}, topic, topic ? strlen(topic) : 0, &b, NULL,
                                     id, &valid, &err) != WK_OK) {
            free(src);
            return wk_cli_fail(&err);
        }
        wk_hex_encode(id, sizeof id, hex);
        fprintf(stderr, "message-id %s %s\n", hex, valid ? "valid" : "invalid");
    }
    uint64_t declared = 0;
    uint8_t *dst = NULL;
    wk_in in = {src, n, 0};
    wk_out out = {NULL, 0, 0};
    if (wk_eth_gossip_peek(&in, &b, &declared, &err) != WK_OK) {
        rc = wk_cli_fail(&err);
    } else if (!(dst = malloc(declared ? (size_t)declared : 1))) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate %llu bytes\n", (unsigned long long)declared);
        rc = WK_EXIT_USAGE;
    } else if (out = (wk_out){dst, (size_t)declared, 0},
               wk_eth_gossip_decode(&in, &b, &out, &err) != WK_DONE) {
        rc = wk_cli_fail(&err);
    } else {
        rc = eth_put(dst, out.pos);
    }
    free(src);
    free(dst);
    return eth_finish_stdout(rc);
}
