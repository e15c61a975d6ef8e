/* wirekit iltp sync: Blob sync sessions over stdio, unix:, tcp:, ws:, wss: and quib: carriers. */
#include "cli.h"
#include <wirekit/host.h>
#include <string.h>
#include <unistd.h>

/* A byte count with an optional k, M or G suffix (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
    size_t n = strlen(s);
    uint64_t mul = 1;
    if (n && (s[n - 1] == 'k' || s[n - 1] == 'K')) mul = 1u << 10;
    else if (n && s[n - 1] == 'M') mul = 1u << 20;
    else if (n && s[n - 1] == 'G') mul = 1u << 30;
    char digits[32];
    if (mul != 1) n--;
    if (n == 0 || n >= sizeof digits) return false;
    memcpy(digits, s, n);
    digits[n] = 0;
    uint64_t v;
    if (!wk_cli_parse_u64(digits, 1, UINT64_MAX / mul, &v)) return false;
    *out = v * mul;
    return true;
}

int wk_cli_iltp_sync(int argc, char **argv)
{
    wk_host_sync_opts o;
    memset(&o, 0, sizeof o);
    const char *addr = NULL;
    uint64_t v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit iltp sync (--listen ADDR | --connect ADDR) --store DIR [options]\n"
                   "Content-addressed Blob sync: after a session both stores hold the union.\n"
                   "  --listen ADDR       serve sessions (side0); prints 'listening on ADDR' first\n"
                   "  --connect ADDR      run one session to fixed point and close (side1)\n"
                   "  --store DIR         the Blob store (created if missing)\n"
                   "  --once              with --listen: serve one session, then exit\n"
                   "  --encode LIST       encodings we produce, most preferred first (0.13 form;\n"
                   "                      default zstd20c,deflate12c; '' offers none)\n"
                   "  --decode LIST       encodings we decode (default deflate12c,zstd20c)\n"
                   "  --form 1.0|0.13     preface form (default 0.13)\n"
                   "  --level N           compression level\n"
                   "  --timeout-ms N      absolute phase deadline (default 600000, 0 = none)\n"
                   "  --budget-prefacing N, --budget-establishment N, --budget-round N\n"
                   "                      received-control bytes per phase (defaults 64 KiB, 4 MiB, 256 MiB)\n"
                   "  --watch             with --connect: stay at fixed point and sync new Blobs both ways\n"
                   "                      until SIGINT/SIGTERM (a listener always watches its store)\n"
                   "  --max-sessions N    listener: sessions at once; one more is refused (default 256)\n"
                   "  --max-memory N      listener: bytes for all sessions' buffers and codecs, with k/M/G\n"
                   "                      suffixes (default 1G); a session that would exceed it fails\n"
                   "  --idle-timeout-ms N listener: close a session silent at fixed point this long\n"
                   "                      (default 600000, 0 = never)\n"
                   "  --progress          a progress line on stderr when it is a terminal\n"
                   "  --json              one JSON summary object per session on stdout\n"
                   "  --verbose           print each item as it passes\n"
                   "  --cert FILE, --key FILE  certificate chain and key (PEM) of a wss: or quib: listener\n"
                   "  --ca FILE           trust anchors (PEM; default: the system store) of a wss: or quib:\n"
                   "                      connector; the certificate must verify and name the address's host\n"
                   "  --ws-max-message N  largest WebSocket message received (bytes, k/M/G; default 16M)\n"
                   "  --trust-confidential-channel  proof assurance override: ConfidentialChannel on\n"
                   "                      ws: (e.g. behind a trusted WSS reverse proxy); quib: keeps ChannelBound\n"
                   "  --disable-proof     proof assurance override Disabled (the zero-row proof block)\n"
                   "  --transport-timeout-ms N  bound on each transport wait: connect, TLS, WebSocket and\n"
                   "                      close handshakes, QUIC idle, FIN acknowledgement (default 30000)\n"
                   "SIGINT or SIGTERM: no new sessions; each session closes cleanly at fixed point (exit 0);\n"
                   "a second signal ends them at once.\n"
                   "ADDR: stdio, unix:/abs/path, tcp:host[:port], quib:host[:port] (default port 4790;\n"
                   "      port 0 picks one), ws:host[:port][/path] (port 80, path /interlace),\n"
                   "      wss:host[:port][/path] (443). quib: is ILTP over QUIC v1 with ALPN QUIB/1 and\n"
                   "      ChannelBound proofs from the TLS exporter.\n"
                   "Exit: 0 clean, 1 local failure, 2 peer protocol failure, 4 transport failure.\n");
            return 0;
        } else if ((strcmp(a, "--listen") == 0 || strcmp(a, "--connect") == 0) && more) {
            if (addr) return wk_cli_usage("give one of --listen and --connect");
            o.listen = a[2] == 'l';
            addr = argv[++i];
        } else if (strcmp(a, "--store") == 0 && more) {
            o.store_dir = argv[++i];
        } else if (strcmp(a, "--once") == 0) {
            o.once = true;
        } else if (strcmp(a, "--encode") == 0 && more) {
            o.encode = argv[++i];
        } else if (strcmp(a, "--decode") == 0 && more) {
            o.decode = argv[++i];
        } else if (strcmp(a, "--form") == 0 && more) {
            const char *f = argv[++i];
            if (strcmp(f, "1.0") == 0) o.form = WK_ILTP_FORM_1_0;
            else if (strcmp(f, "0.13") == 0) o.form = WK_ILTP_FORM_0_13;
            else return wk_cli_usage("--form takes 1.0 or 0.13");
        } else if (strcmp(a, "--level") == 0 && more) {
            if (!wk_cli_parse_u64(argv[++i], 0, 19, &v)) return wk_cli_usage("bad --level");
            o.level = (int)v;
        } else if (strcmp(a, "--timeout-ms") == 0 && more) {
            if (!wk_cli_parse_u64(argv[++i], 0, 86400000, &v)) return wk_cli_usage("bad --timeout-ms");
            o.phase_timeout_ms = v;
        } else if (strcmp(a, "--verbose") == 0) {
            o.verbose = true;
        } else if (strcmp(a, "--cert") == 0 && more) {
            o.cert_file = argv[++i];
        } else if (strcmp(a, "--key") == 0 && more) {
            o.key_file = argv[++i];
        } else if (strcmp(a, "--ca") == 0 && more) {
            o.ca_file = argv[++i];
        } else if (strcmp(a, "--ws-max-message") == 0 && more) {
            if (!parse_size(argv[++i], &v) || v == 0) return wk_cli_usage("bad --ws-max-message (bytes, with k, M or G)");
            o.ws_max_message = v;
        } else if (strcmp(a, "--trust-confidential-channel") == 0) {
            if (o.assurance_override == WK_HOST_OVERRIDE_DISABLED)
                return wk_cli_usage("--trust-confidential-channel and --disable-proof exclude each other");
            o.assurance_override = WK_HOST_OVERRIDE_TRUST_CONFIDENTIAL_CHANNEL;
        } else if (strcmp(a, "--disable-proof") == 0) {
            if (o.assurance_override == WK_HOST_OVERRIDE_TRUST_CONFIDENTIAL_CHANNEL)
                return wk_cli_usage("--trust-confidential-channel and --disable-proof exclude each other");
            o.assurance_override = WK_HOST_OVERRIDE_DISABLED;
        } else if (strcmp(a, "--transport-timeout-ms") == 0 && more) {
            if (!wk_cli_parse_u64(argv[++i], 1, 86400000, &v)) return wk_cli_usage("bad --transport-timeout-ms");
            o.transport_timeout_ms = v;
        } else if (strcmp(a, "--watch") == 0) {
            o.watch = true;
        } else if (strcmp(a, "--progress") == 0) {
            o.progress = true;
        } else if (strcmp(a, "--json") == 0) {
            o.json = true;
        } else if (strcmp(a, "--max-sessions") == 0 && more) {
            if (!wk_cli_parse_u64(argv[++i], 1, 1000000, &v)) return wk_cli_usage("bad --max-sessions");
            o.max_sessions = (unsigned)v;
        } else if (strcmp(a, "--max-memory") == 0 && more) {
            if (!parse_size(argv[++i], &v)) return wk_cli_usage("bad --max-memory (bytes, with k, M or G)");
            o.max_memory = v;
        } else if (strcmp(a, "--idle-timeout-ms") == 0 && more) {
            if (!wk_cli_parse_u64(argv[++i], 0, 86400000, &v)) return wk_cli_usage("bad --idle-timeout-ms");
            o.idle_timeout_ms = v ? v : UINT64_MAX;
        } else if ((strcmp(a, "--budget-prefacing") == 0 || strcmp(a, "--budget-establishment") == 0 ||
                    strcmp(a, "--budget-round") == 0) && more) {
            if (!wk_cli_parse_u64(argv[++i], 1, UINT64_MAX, &v)) return wk_cli_usage("bad %s", a);
            if (a[9] == 'p') o.budget_prefacing = v;
            else if (a[9] == 'e') o.budget_establishment = v;
            else o.budget_round = v;
        } else {
            return wk_cli_usage("wirekit iltp sync: unknown or incomplete option '%s'", a);
        }
    }
    if (!addr) return wk_cli_usage("wirekit iltp sync needs --listen ADDR or --connect ADDR");
    if (!o.store_dir) return wk_cli_usage("wirekit iltp sync needs --store DIR");
    if (strncmp(addr, "quib:", 5) == 0 && o.listen && (!o.cert_file || !o.key_file))
        return wk_cli_usage("--listen quib: needs --cert FILE and --key FILE");
    /* offer every encoding we implement unless told otherwise ("" offers none) */
    if (!o.decode) o.decode = "deflate12c,zstd20c";
    if (!o.encode) o.encode = "zstd20c,deflate12c";
    bool timeout_given = false;
    for (int i = 1; i < argc; i++) if (strcmp(argv[i], "--timeout-ms") == 0) timeout_given = true;
    if (!timeout_given) o.phase_timeout_ms = 600000;
    wk_error err;
    if (wk_iltp_address_parse(addr, strlen(addr), &o.addr, &err) != WK_OK) return wk_cli_fail_usage(&err);
    bool tls = o.addr.scheme == WK_ILTP_SCHEME_WSS || o.addr.scheme == WK_ILTP_SCHEME_QUIB;
    if ((o.cert_file || o.key_file) && !(tls && o.listen))
        return wk_cli_usage("--cert and --key belong to a wss: (or quib:) listener");
    if (o.ca_file && !(tls && !o.listen)) return wk_cli_usage("--ca belongs to a wss: (or quib:) connector");
    if (tls && o.listen && (!o.cert_file || !o.key_file))
        return wk_cli_usage("a %s listener needs --cert FILE and --key FILE", wk_iltp_scheme_name(o.addr.scheme));
    if (o.ws_max_message && o.addr.scheme != WK_ILTP_SCHEME_WS && o.addr.scheme != WK_ILTP_SCHEME_WSS)
        return wk_cli_usage("--ws-max-message belongs to ws: and wss: addresses");
    wk_error_clear(&err);
    int rc = wk_host_sync_run(&o, &err);
    if (rc != 0 && err.code != WK_OK) {
        char line[256];
        fprintf(stderr, "%s\n", wk_error_format(&err, line, sizeof line));
    }
    return rc;
}
