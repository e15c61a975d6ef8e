/* wirekit iltp: Lace-065 stream encoding commands (encode, decode, select, dictionary, demo). */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

#define IO_CHUNK 65536

static int parse_encoding(const char *s, wk_iltp_encoding *enc)
{
    *enc = wk_iltp_encoding_lookup(s, strlen(s));
    if (*enc == WK_ILTP_UNKNOWN)
        return wk_cli_usage("unknown encoding '%s' (identity, deflate12c, zstd20c)", s);
    return 0;
}

/* --backend zlib|isal (deflate12c; the other tokens have one backend and accept either). */
static int parse_backend(const char *s, wk_iltp_backend *b)
{
    if (strcmp(s, "zlib") == 0) *b = WK_ILTP_BACKEND_ZLIB;
    else if (strcmp(s, "isal") == 0) *b = WK_ILTP_BACKEND_ISAL;
    else return wk_cli_usage("unknown backend '%s' (zlib, isal)", s);
    return 0;
}

/* Writes everything in buf[0..n) to stdout; returns 1 (local failure) on error. */
static int put(const uint8_t *p, size_t n)
{
    if (!wk_cli_write(p, n)) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------- */
static int cmd_encode(int argc, char **argv)
{
    wk_iltp_encoding enc = WK_ILTP_UNKNOWN;
    wk_iltp_backend backend = WK_ILTP_BACKEND_DEFAULT;
    uint64_t level = 0, batch = 65536;
    const char *level_arg = NULL;
    bool end_mark = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit iltp encode --encoding TOKEN [--backend zlib|isal] [--level N]\n"
                   "                           [--batch-bytes N] [--no-end-mark]\n"
                   "Encodes stdin to stdout: one writer batch (ending with the token's flush) per N\n"
                   "input bytes (default 65536), then the end mark unless --no-end-mark.\n"
                   "  --encoding TOKEN   identity, deflate12c or zstd20c\n"
                   "  --backend B        deflate12c: isal (ISA-L igzip, the default) or zlib\n"
                   "  --level N          deflate12c 0..9 (default 6; isal: 1-3 igzip 1, 4-6 igzip 2,\n"
                   "                     7-9 igzip 3), zstd20c 1..19 (default 3)\n"
                   "  --batch-bytes N    input bytes per writer batch (1..1073741824)\n"
                   "  --no-end-mark      leave the stream open (no end mark)\n");
            return 0;
        } else if (strcmp(a, "--encoding") == 0 && i + 1 < argc) {
            if (parse_encoding(argv[++i], &enc)) return WK_EXIT_USAGE;
        } else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            if (parse_backend(argv[++i], &backend)) return WK_EXIT_USAGE;
        } else if (strcmp(a, "--level") == 0 && i + 1 < argc) {
            if (!wk_cli_parse_u64(argv[++i], 0, 19, &level)) return wk_cli_usage("bad --level '%s'", argv[i]);
            level_arg = argv[i];
        } else if (strcmp(a, "--batch-bytes") == 0 && i + 1 < argc) {
            if (!wk_cli_parse_u64(argv[++i], 1, 1u << 30, &batch))
                return wk_cli_usage("bad --batch-bytes '%s'", argv[i]);
        } else if (strcmp(a, "--no-end-mark") == 0) {
            end_mark = false;
        } else {
            return wk_cli_usage("wirekit iltp encode: unknown or incomplete option '%s'", a);
        }
    }
    if (enc == WK_ILTP_UNKNOWN) return wk_cli_usage("wirekit iltp encode: --encoding is required");
    if (level_arg && ((enc == WK_ILTP_DEFLATE12C && level > 9) || (enc == WK_ILTP_ZSTD20C && level < 1)))
        return wk_cli_usage("--level %s: deflate12c takes 0..9, zstd20c 1..19", level_arg);
    wk_error err;
    wk_iltp_encoder_params params = {(int)level, NULL, backend};
    wk_iltp_encoder *e = wk_iltp_encoder_create(enc, &params, &err);
    if (!e) return wk_cli_fail(&err);
    static uint8_t ibuf[IO_CHUNK], obuf[IO_CHUNK];
    int rc = 0;
    uint64_t in_batch = 0;
    bool eof = false;
    while (!eof && rc == 0) {
        size_t want = batch - in_batch < IO_CHUNK ? (size_t)(batch - in_batch) : IO_CHUNK;
        size_t got = fread(ibuf, 1, want, stdin);
        if (got < want) {
            if (ferror(stdin)) { fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n"); rc = 1; break; }
            eof = true;
        }
        in_batch += got;
        /* a batch ends at N bytes, or at EOF if it holds any bytes */
        bool batch_end = in_batch == batch || (eof && in_batch > 0);
        wk_iltp_op op = batch_end ? WK_ILTP_FLUSH : WK_ILTP_CONTINUE;
        if (batch_end) in_batch = 0;
        if (got == 0 && op == WK_ILTP_CONTINUE) continue;
        wk_in in = {ibuf, got, 0};
        wk_result r;
        do {
            wk_out out = {obuf, sizeof obuf, 0};
            r = wk_iltp_encoder_encode(e, &in, &out, op, &err);
            if (r == WK_ERROR) { rc = wk_cli_fail(&err); break; }
            if ((rc = put(obuf, out.pos))) break;
        } while (r == WK_NEED_OUTPUT);
    }
    if (rc == 0 && end_mark) {
        wk_result r;
        do {
            wk_out out = {obuf, sizeof obuf, 0};
            r = wk_iltp_encoder_encode(e, NULL, &out, WK_ILTP_END, &err);
            if (r == WK_ERROR) { rc = wk_cli_fail(&err); break; }
            if ((rc = put(obuf, out.pos))) break;
        } while (r == WK_NEED_OUTPUT);
    }
    if (fflush(stdout) != 0 && rc == 0) rc = put(NULL, 1);
    wk_iltp_encoder_destroy(e);
    return rc;
}

/* ------------------------------------------------------------------------------------------- */
static int cmd_decode(int argc, char **argv)
{
    wk_iltp_encoding enc = WK_ILTP_UNKNOWN;
    wk_iltp_backend backend = WK_ILTP_BACKEND_DEFAULT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit iltp decode --encoding TOKEN [--backend zlib|isal]\n"
                   "Decodes stdin to stdout. Exit 0 on a clean end (end mark then EOF, or a raw\n"
                   "preface after the end mark, whose offset is reported on stderr), 2 on invalid\n"
                   "input, 3 on truncated input, 1 on usage errors.\n"
                   "  --encoding TOKEN   identity, deflate12c or zstd20c\n"
                   "  --backend B        deflate12c: isal (ISA-L igzip, the default) or zlib\n");
            return 0;
        } else if (strcmp(a, "--encoding") == 0 && i + 1 < argc) {
            if (parse_encoding(argv[++i], &enc)) return WK_EXIT_USAGE;
        } else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            if (parse_backend(argv[++i], &backend)) return WK_EXIT_USAGE;
        } else {
            return wk_cli_usage("wirekit iltp decode: unknown or incomplete option '%s'", a);
        }
    }
    if (enc == WK_ILTP_UNKNOWN) return wk_cli_usage("wirekit iltp decode: --encoding is required");
    wk_error err;
    wk_iltp_decoder_params dparams = {NULL, backend};
    wk_iltp_decoder *d = wk_iltp_decoder_create(enc, &dparams, &err);
    if (!d) return wk_cli_fail(&err);
    static uint8_t ibuf[IO_CHUNK], obuf[IO_CHUNK];
    size_t have = 0; /* unread bytes at the start of ibuf */
    bool eof = false;
    int rc = 0;
    for (;;) {
        if (!eof && have < sizeof ibuf) {
            size_t got;
            if ((rc = wk_cli_read_some(ibuf + have, sizeof ibuf - have, &got)) != 0) break;
            if (got == 0) eof = true;
            have += got;
        }
        wk_in in = {ibuf, have, 0};
        wk_result r;
        for (;;) {
            wk_out out = {obuf, sizeof obuf, 0};
            r = wk_iltp_decoder_decode(d, &in, &out, &err);
            if (out.pos && (rc = put(obuf, out.pos))) break;
            if (r != WK_NEED_OUTPUT) break;
        }
        if (rc) break;
        memmove(ibuf, ibuf + in.pos, have - in.pos);
        have -= in.pos;
        if (r == WK_ERROR) { fflush(stdout); rc = wk_cli_fail(&err); break; }
        if (r == WK_DONE && (have > 0 || eof)) {
            /* End mark consumed. The decoder inspects (never consumes) the bytes after it:
             * WK_DONE once they begin a raw preface, WK_NEED_INPUT while they may still. */
            wk_in rest = {ibuf, have, 0};
            wk_out none = {obuf, 0, 0};
            wk_result after = wk_iltp_decoder_decode(d, &rest, &none, &err);
            if (after == WK_ERROR) { rc = wk_cli_fail(&err); break; }
            if (after == WK_DONE && have > 0) {
                fprintf(stderr, "end mark consumed; raw preface at offset %llu\n",
                        (unsigned long long)wk_iltp_decoder_consumed(d));
                break;
            }
            if (eof) {
                if (wk_iltp_decoder_finish(d, &rest, &err) != WK_DONE) {
                    fflush(stdout);
                    rc = wk_cli_fail(&err);
                }
                break;
            }
            continue;
        }
        if (eof && (r == WK_NEED_INPUT || r == WK_DONE)) {
            wk_in rest = {ibuf, have, 0};
            if (wk_iltp_decoder_finish(d, &rest, &err) != WK_DONE) {
                fflush(stdout);
                rc = wk_cli_fail(&err);
            }
            break;
        }
    }
    if (fflush(stdout) != 0 && rc == 0) rc = put(NULL, 1);
    wk_iltp_decoder_destroy(d);
    return rc;
}

/* ------------------------------------------------------------------------------------------- */
static int read_preface_file(const char *path, uint8_t **buf, wk_iltp_preface *p, const char *label)
{
    FILE *f = fopen(path, "rb");
    if (!f) return wk_cli_usage("cannot open '%s'", path);
    size_t len;
    bool too_long;
    *buf = wk_cli_read_all(f, 1 << 20, &len, &too_long);
    fclose(f);
    if (!*buf) return wk_cli_usage("cannot read '%s'%s", path, too_long ? " (over 1 MiB)" : "");
    wk_error err;
    wk_in in = {*buf, len, 0};
    wk_result r = wk_iltp_preface_parse(&in, WK_ILTP_FORM_0_13, p, &err);
    if (r == WK_NEED_INPUT) {
        wk_error_set(&err, WK_ERR_ILTP_TRUNCATED, len, "%s: input ended inside the preface", label);
        return wk_cli_fail(&err);
    }
    if (r == WK_ERROR) {
        char line[256];
        fprintf(stderr, "%s (preface %s)\n", wk_error_format(&err, line, sizeof line), label);
        return wk_cli_exit_for(&err);
    }
    return 0;
}

static int cmd_select(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    bool json = false;
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit iltp select [--json] FILE_A FILE_B\n"
                   "Reads two 0.13-form prefaces and prints the encoding selected for each direction:\n"
                   "  A->B: TOKEN\n  B->A: TOKEN\n"
                   "Trailing bytes after each preface are ignored.\n");
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return wk_cli_usage("wirekit iltp select: unknown option '%s'", argv[i]);
        } else if (nf < 2) {
            files[nf++] = argv[i];
        } else {
            return wk_cli_usage("wirekit iltp select: expects exactly two files");
        }
    }
    if (nf != 2) return wk_cli_usage("wirekit iltp select: expects FILE_A FILE_B");
    uint8_t *ba = NULL, *bb = NULL;
    wk_iltp_preface pa, pb;
    int rc = read_preface_file(files[0], &ba, &pa, "A");
    if (!rc) rc = read_preface_file(files[1], &bb, &pb, "B");
    wk_error perr;
    if (!rc && wk_iltp_nonce_pair_check(pa.nonce, pb.nonce, &perr) != WK_OK) rc = wk_cli_fail(&perr);
    if (!rc) {
        const char *tab, *tba;
        size_t lab, lba;
        wk_iltp_offer_select(&pa.encode, &pb.decode, &tab, &lab);
        wk_iltp_offer_select(&pb.encode, &pa.decode, &tba, &lba);
        if (json)
            printf("{\"A->B\":\"%.*s\",\"B->A\":\"%.*s\"}\n", (int)lab, tab, (int)lba, tba);
        else
            printf("A->B: %.*s\nB->A: %.*s\n", (int)lab, tab, (int)lba, tba);
    }
    free(ba);
    free(bb);
    return rc;
}

static int cmd_dictionary(int argc, char **argv)
{
    if (argc > 1 && wk_cli_is_help(argv[1])) {
        printf("usage: wirekit iltp dictionary\nWrites the 830-byte Lace-065 dictionary to stdout.\n");
        return 0;
    }
    if (argc > 1) return wk_cli_usage("wirekit iltp dictionary takes no arguments");
    int rc = put(wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN);
    if (fflush(stdout) != 0 && rc == 0) rc = 1;
    return rc;
}

static const wk_cli_command cmds[] = {
    {"encode", "--encoding TOKEN [--backend zlib|isal] [--level N] [--batch-bytes N] [--no-end-mark]: stdin to encoded stdout", cmd_encode},
    {"decode", "--encoding TOKEN [--backend zlib|isal]: encoded stdin to decoded stdout; exit 0 clean, 2 invalid, 3 truncated", cmd_decode},
    {"select", "FILE_A FILE_B: the encoding each direction selects from two 0.13 prefaces", cmd_select},
    {"dictionary", "write the 830-byte stream-encoding dictionary to stdout", cmd_dictionary},
    {"items", "[--encoding TOKEN] [--json]: one line per item of one direction, then the EOF verdict", wk_cli_iltp_items},
    {"blob", "< DATA: the canonical H3 Blob record for stdin", wk_cli_iltp_blob},
    {"nonce", "--seed HEX64 [--sequence N] [--peer B64A] [--json]: the Lace-060 session nonce", wk_cli_iltp_nonce},
    {"address", "ADDRESS [--json]: parse a Lace-060 address; its fields and canonical form", wk_cli_iltp_address},
    {"sync", "(--listen|--connect) ADDR --store DIR [...]: Blob sync sessions over stdio, unix:, tcp:", wk_cli_iltp_sync},
    {"put", "--store DIR < FILE: store stdin as a Blob, print its hash", wk_cli_iltp_put},
    {"ls", "--store DIR: the store's Blob hashes, one per line", wk_cli_iltp_ls},
    {"get", "--store DIR HASH: write the Blob's data", wk_cli_iltp_get},
    {"demo", "a stream round trip between two endpoints: sizes and selected encodings", wk_cli_iltp_demo},
};

int wk_cli_iltp(int argc, char **argv)
{
    return wk_cli_dispatch("iltp", "ILTP (Lace-060/065): stream encoding, offers, prefaces", cmds,
                           sizeof cmds / sizeof cmds[0], argc, argv);
}
