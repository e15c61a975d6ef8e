/* wirekit blake3 (hash stdin) and wirekit b64a (encode, decode). */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

#define IO_CHUNK 65536

/* Writes buf[0..n) to stdout; returns 1 (local failure) on error. */
static int put(const void *p, size_t n)
{
    if (!wk_cli_write(p, n)) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return 0;
}

/* Flushes stdout; returns 1 on failure (e.g. a closed pipe or a full disk). */
static int finish_stdout(int rc)
{
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit blake3
 * ------------------------------------------------------------------------------------------- */

#define BLAKE3_SYNOPSIS "[--keyed KEYHEX | --derive-key CTX] [--length N]"

static void blake3_help(void)
{
    printf("usage: wirekit blake3 " BLAKE3_SYNOPSIS "\n"
           "BLAKE3 hash, keyed hash, derive-key and extended output of stdin, as lowercase hex.\n"
           "\ncommands:\n"
           "  wirekit blake3 " BLAKE3_SYNOPSIS "  hash stdin\n"
           "\noptions:\n"
           "  --keyed KEYHEX      keyed hash; the 32-byte key as 64 hex digits\n"
           "  --derive-key CTX    derive-key mode with context string CTX (stdin is the key material)\n"
           "  --length N          output N bytes of the extended output (default 32)\n"
           "  -h, --help          this help\n");
}

/* wirekit blake3: hashes stdin (read in 64 KiB pieces) and prints the output in hex. */
int wk_cli_blake3(int argc, char **argv)
{
    const char *keyhex = NULL, *context = NULL, *length_arg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        if (wk_cli_is_help(argv[i])) {
            blake3_help();
            return WK_EXIT_OK;
        } else if (wk_cli_take(argc, argv, &i, "--keyed", &val)) {
            if (!val) return wk_cli_usage("wirekit blake3: --keyed needs a value (64 hex digits)");
            if (keyhex) return wk_cli_usage("wirekit blake3: --keyed given twice");
            keyhex = val;
        } else if (wk_cli_take(argc, argv, &i, "--derive-key", &val)) {
            if (!val) return wk_cli_usage("wirekit blake3: --derive-key needs a context string");
            if (context) return wk_cli_usage("wirekit blake3: --derive-key given twice");
            context = val;
        } else if (wk_cli_take(argc, argv, &i, "--length", &val)) {
            if (!val) return wk_cli_usage("wirekit blake3: --length needs a value");
            if (length_arg) return wk_cli_usage("wirekit blake3: --length given twice");
            length_arg = val;
        } else {
            return wk_cli_usage("wirekit blake3: unknown option or argument '%s' (see 'wirekit "
                                "blake3 --help'; input is read from stdin)", argv[i]);
        }
    }
    if (keyhex && context) return wk_cli_usage("wirekit blake3: --keyed and --derive-key exclude each other");

    uint64_t out_len = WK_BLAKE3_OUT_LEN;
    if (length_arg && !wk_cli_parse_u64(length_arg, 0, UINT64_MAX, &out_len))
        return wk_cli_usage("wirekit blake3: bad --length '%s' (a decimal byte count)", length_arg);

    wk_blake3_hasher h;
    if (keyhex) {
        uint8_t key[WK_BLAKE3_KEY_LEN];
        if (strlen(keyhex) != 2 * WK_BLAKE3_KEY_LEN ||
            wk_hex_decode(keyhex, strlen(keyhex), key, sizeof key) != WK_BLAKE3_KEY_LEN)
            return wk_cli_usage("wirekit blake3: --keyed needs exactly 64 hex digits (32 bytes)");
        wk_blake3_init_keyed(&h, key);
    } else if (context) {
        wk_blake3_init_derive_key(&h, context, strlen(context));
    } else {
        wk_blake3_init(&h);
    }

    uint8_t *buf = malloc(IO_CHUNK);
    if (!buf) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate the read buffer\n");
        return WK_EXIT_USAGE;
    }
    for (;;) {
        size_t got = fread(buf, 1, IO_CHUNK, stdin);
        wk_blake3_update(&h, buf, got);
        if (got < IO_CHUNK) {
            if (ferror(stdin)) {
                free(buf);
                fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n");
                return WK_EXIT_USAGE;
            }
            if (feof(stdin)) break;
        }
    }
    free(buf);

    /* The output, in pieces, so any --length streams without a large buffer. */
    int rc = 0;
    uint8_t out[1024];
    char hex[2 * sizeof out + 1];
    for (uint64_t done = 0; done < out_len && rc == 0;) {
        size_t n = out_len - done < sizeof out ? (size_t)(out_len - done) : sizeof out;
        wk_blake3_finalize_seek(&h, done, out, n);
        wk_hex_encode(out, n, hex);
        rc = put(hex, 2 * n);
        done += n;
    }
    if (rc == 0) rc = put("\n", 1);
    return finish_stdout(rc);
}

/* ---------------------------------------------------------------------------------------------
 * wirekit b64a
 * ------------------------------------------------------------------------------------------- */

static int b64a_encode_cmd(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit b64a encode\n"
                   "Encodes stdin bytes as B64A text (no padding) followed by a newline.\n"
                   "  -h, --help   this help\n");
            return WK_EXIT_OK;
        }
        return wk_cli_usage("wirekit b64a encode: unknown option or argument '%s'", argv[i]);
    }
    /* Whole 3-byte groups encode independently, so stdin is encoded in pieces of 3*16384 bytes. */
    enum { PIECE = 3 * 16384 };
    uint8_t *in = malloc(PIECE);
    char *text = malloc(PIECE / 3 * 4);
    int rc = 0;
    if (!in || !text) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot allocate buffers\n");
        rc = WK_EXIT_USAGE;
    }
    while (rc == 0) {
        size_t got = fread(in, 1, PIECE, stdin);
        if (got < PIECE && ferror(stdin)) {
            fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n");
            rc = WK_EXIT_USAGE;
            break;
        }
        size_t n = wk_b64a_encode(in, got, text);
        rc = put(text, n);
        if (got < PIECE) break; /* end of input: fread reads full pieces until then */
    }
    free(in);
    free(text);
    if (rc == 0) rc = put("\n", 1);
    return finish_stdout(rc);
}

/* Decodes text[0..n) (stream offset base) to stdout; 0 or the exit status with the error line. */
static int b64a_decode_piece(const char *text, size_t n, uint64_t base, uint8_t *out, size_t cap)
{
    size_t out_len = 0;
    wk_error err;
    wk_error_clear(&err);
    if (wk_b64a_decode(text, n, out, cap, &out_len, &err) != WK_OK) {
        if (err.has_offset) err.offset += base;
        if (err.code == WK_ERR_B64A_LENGTH) /* the tail's length mod 4 is the text's: say the text's */
            wk_error_set(&err, WK_ERR_B64A_LENGTH, base + n,
                         "%llu characters encode no byte string", (unsigned long long)(base + n));
        return wk_cli_fail(&err);
    }
    return put(out, out_len);
}

static int b64a_decode_cmd(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit b64a decode\n"
                   "Strictly decodes B64A text on stdin (one trailing newline allowed) to bytes on\n"
                   "stdout, streamed: each group of 4 characters is written as it is decoded.\n"
                   "Invalid text is an error (exit 2) at its offset; the bytes decoded before it are\n"
                   "on stdout.\n"
                   "  -h, --help   this help\n");
            return WK_EXIT_OK;
        }
        return wk_cli_usage("wirekit b64a decode: unknown option or argument '%s'", argv[i]);
    }
    /* Whole groups of 4 characters decode on their own (24 bits, 3 bytes). Each read is decoded
     * up to its last whole group but one character, which waits: the text's last character may
     * be the one newline allowed, known only at EOF; the tail (0..4 characters) is decoded then. */
    enum { CHUNK = IO_CHUNK };
    static char text[CHUNK + 8];
    static uint8_t out[CHUNK / 4 * 3 + 3];
    size_t have = 0;   /* undecoded characters at text[0..have) */
    uint64_t base = 0; /* stream offset of text[0] */
    int rc = 0;
    for (;;) {
        size_t got;
        if ((rc = wk_cli_read_some(text + have, CHUNK, &got)) != 0) break;
        if (got == 0) { /* EOF: the tail, without its one trailing newline */
            size_t n = have;
            if (n > 0 && text[n - 1] == '\n') n--;
            rc = b64a_decode_piece(text, n, base, out, sizeof out);
            break;
        }
        have += got;
        size_t k = have > 1 ? (have - 1) / 4 * 4 : 0;
        if (k > 0) {
            if ((rc = b64a_decode_piece(text, k, base, out, sizeof out)) != 0) break;
            memmove(text, text + k, have - k);
            have -= k;
            base += k;
        }
    }
    return finish_stdout(rc);
}

static const wk_cli_command b64a_commands[] = {
    {"encode", "stdin bytes to B64A text and a newline", b64a_encode_cmd},
    {"decode", "B64A text (one trailing newline allowed) to bytes, strictly", b64a_decode_cmd},
};

/* wirekit b64a: dispatches encode / decode. */
int wk_cli_b64a(int argc, char **argv)
{
    return wk_cli_dispatch("b64a", "B64A (64-character ASCII-order alphabet, no padding) encode and "
                                   "strict decode",
                           b64a_commands, sizeof b64a_commands / sizeof b64a_commands[0], argc, argv);
}
