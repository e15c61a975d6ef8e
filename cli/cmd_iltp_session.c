/* wirekit iltp nonce (Lace-060 session nonce derivation) and wirekit iltp address (Lace-060
 * address strings). */
#include "cli.h"
#include <string.h>

#define NONCE_SYNOPSIS "--seed HEX64 [--sequence N] [--peer B64A] [--json]"
#define ADDRESS_SYNOPSIS "ADDRESS [--json]"

/* argv[*i] is `name`: sets *val to the next argument (NULL if there is none) and steps over it. */
static bool take_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    if (strcmp(argv[*i], name) != 0) return false;
    *val = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

/* Flushes stdout; a write failure is a local failure (exit 1). */
static int finish_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return WK_EXIT_OK;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit iltp nonce
 * ------------------------------------------------------------------------------------------- */
static void nonce_help(void)
{
    printf("usage: wirekit iltp nonce " NONCE_SYNOPSIS "\n"
           "Derives a Lace-060 session nonce: BLAKE3_KEYED(key = seed,\n"
           "  \"lace-iltp/1.0/session-nonce/v1\" || 0x00 || u64be(sequence))\n"
           "starting at sequence N and skipping an all-zero candidate or one equal to the peer\n"
           "nonce. Prints the nonce in B64A (43 characters) on one line.\n"
           "  --seed HEX64     the carrier nonce seed: 64 hex digits (32 bytes, not all zero)\n"
           "  --sequence N     the first sequence value to try, 0..18446744073709551615 (default 0)\n"
           "  --peer B64A      the peer's nonce (43 B64A characters), skipped if derived\n"
           "  --json           print {\"nonce\":\"...\",\"sequence\":\"N\"} with the sequence used\n"
           "Exit status: 0 ok, 1 usage error or sequence exhausted (ILTP_ERR_NONCE_EXHAUSTED).\n");
}

int wk_cli_iltp_nonce(int argc, char **argv)
{
    const char *seed_hex = NULL, *seq_arg = NULL, *peer_arg = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        if (wk_cli_is_help(argv[i])) {
            nonce_help();
            return WK_EXIT_OK;
        } else if (take_value(argc, argv, &i, "--seed", &val)) {
            if (!val) return wk_cli_usage("wirekit iltp nonce: --seed needs a value (64 hex digits)");
            if (seed_hex) return wk_cli_usage("wirekit iltp nonce: --seed given twice");
            seed_hex = val;
        } else if (take_value(argc, argv, &i, "--sequence", &val)) {
            if (!val) return wk_cli_usage("wirekit iltp nonce: --sequence needs a value");
            if (seq_arg) return wk_cli_usage("wirekit iltp nonce: --sequence given twice");
            seq_arg = val;
        } else if (take_value(argc, argv, &i, "--peer", &val)) {
            if (!val) return wk_cli_usage("wirekit iltp nonce: --peer needs a value (43 B64A characters)");
            if (peer_arg) return wk_cli_usage("wirekit iltp nonce: --peer given twice");
            peer_arg = val;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            return wk_cli_usage("wirekit iltp nonce: unknown option or argument '%s' (usage: wirekit "
                                "iltp nonce " NONCE_SYNOPSIS ")", argv[i]);
        }
    }
    if (!seed_hex) return wk_cli_usage("wirekit iltp nonce: --seed is required (64 hex digits)");

    uint8_t seed[32];
    if (strlen(seed_hex) != 64 || wk_hex_decode(seed_hex, 64, seed, sizeof seed) != 32)
        return wk_cli_usage("wirekit iltp nonce: --seed needs exactly 64 hex digits (32 bytes)");

    uint64_t first = 0;
    if (seq_arg && !wk_cli_parse_u64(seq_arg, 0, UINT64_MAX, &first))
        return wk_cli_usage("wirekit iltp nonce: bad --sequence '%s' (a decimal number 0..%llu)",
                            seq_arg, (unsigned long long)UINT64_MAX);

    uint8_t peer[32];
    if (peer_arg) {
        size_t got = 0;
        wk_error e;
        if (strlen(peer_arg) != WK_ILTP_NONCE_TEXT_LEN ||
            wk_b64a_decode(peer_arg, WK_ILTP_NONCE_TEXT_LEN, peer, sizeof peer, &got, &e) != WK_OK ||
            got != 32)
            return wk_cli_usage("wirekit iltp nonce: --peer needs a nonce: 43 canonical B64A characters");
        uint8_t any = 0;
        for (size_t k = 0; k < sizeof peer; k++) any |= peer[k];
        if (!any) return wk_cli_usage("wirekit iltp nonce: --peer is all zero, which is never a nonce");
    }

    wk_iltp_nonce_gen g;
    wk_error err;
    if (wk_iltp_nonce_gen_init(&g, seed, first, &err) != WK_OK)
        return wk_cli_usage("wirekit iltp nonce: --seed must not be all zero");
    uint8_t nonce[32];
    uint64_t used = 0;
    if (wk_iltp_nonce_gen_next(&g, peer_arg ? peer : NULL, nonce, &used, &err) != WK_OK)
        return wk_cli_fail(&err);

    char text[WK_ILTP_NONCE_TEXT_LEN + 1];
    text[wk_b64a_encode(nonce, sizeof nonce, text)] = 0;
    if (json)
        printf("{\"nonce\":\"%s\",\"sequence\":\"%llu\"}\n", text, (unsigned long long)used);
    else
        printf("%s\n", text);
    return finish_stdout();
}

/* ---------------------------------------------------------------------------------------------
 * wirekit iltp address
 * ------------------------------------------------------------------------------------------- */
static void address_help(void)
{
    printf("usage: wirekit iltp address " ADDRESS_SYNOPSIS "\n"
           "Parses a Lace-060 address string and prints its fields and canonical form:\n"
           "  scheme=S host=H port=P path=X     (an empty field prints as -)\n"
           "  canonical=ADDRESS\n"
           "Forms: stdio | unix:/abs/path | tcp:host[:port] | quib:host[:port]\n"
           "       | ws:host[:port][/path] | wss:host[:port][/path]\n"
           "Default ports: tcp and quib 4790, ws 80, wss 443; default WebSocket path /interlace.\n"
           "Host: a host name, a dotted-quad IPv4 address, or an IPv6 address in brackets.\n"
           "  --json   print one JSON object with scheme, host, port (a number), path, canonical\n"
           "Exit status: 0 ok, 1 usage error, 2 invalid address (ILTP_ERR_ADDRESS at offset N: ...).\n");
}

/* Prints the NUL-terminated s as a JSON string (quotes, backslashes and controls escaped). */
static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

int wk_cli_iltp_address(int argc, char **argv)
{
    const char *text = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            address_help();
            return WK_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] == '-' && argv[i][1] != 0) {
            return wk_cli_usage("wirekit iltp address: unknown option '%s' (usage: wirekit iltp "
                                "address " ADDRESS_SYNOPSIS ")", argv[i]);
        } else if (text) {
            return wk_cli_usage("wirekit iltp address: one address only ('%s' and '%s')", text, argv[i]);
        } else {
            text = argv[i];
        }
    }
    if (!text) return wk_cli_usage("wirekit iltp address: an address is required (usage: wirekit "
                                   "iltp address " ADDRESS_SYNOPSIS ")");

    wk_iltp_address a;
    wk_error err;
    if (wk_iltp_address_parse(text, strlen(text), &a, &err) != WK_OK) return wk_cli_fail(&err);
    char canonical[WK_ILTP_ADDRESS_MAX + 16];
    wk_out co = {(uint8_t *)canonical, sizeof canonical - 1, 0};
    if (wk_iltp_address_encode(&a, &co, &err) != WK_DONE) {
        fprintf(stderr, "WK_ERR_STATE: cannot format the parsed address\n");
        return WK_EXIT_USAGE;
    }
    canonical[co.pos] = 0;
    const char *scheme = wk_iltp_scheme_name(a.scheme);
    bool has_port = a.scheme != WK_ILTP_SCHEME_STDIO && a.scheme != WK_ILTP_SCHEME_UNIX;
    if (json) {
        printf("{\"scheme\":\"%s\",\"host\":", scheme);
        json_string(a.host);
        printf(",\"port\":%u,\"path\":", (unsigned)a.port);
        json_string(a.path);
        printf(",\"canonical\":");
        json_string(canonical);
        printf("}\n");
    } else {
        char port[8] = "-";
        if (has_port) snprintf(port, sizeof port, "%u", (unsigned)a.port);
        printf("scheme=%s host=%s port=%s path=%s\ncanonical=%s\n", scheme, a.host[0] ? a.host : "-",
               port, a.path[0] ? a.path : "-", canonical);
    }
    return finish_stdout();
}
