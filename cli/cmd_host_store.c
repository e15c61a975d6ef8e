/* wirekit iltp put / ls / get: the host layer's content-addressed Blob store. */
#include "cli.h"
#include <wirekit/host.h>
#include <stdlib.h>
#include <string.h>

/* Options shared by the three commands: --store DIR, optional --expect HASH (put only) and at
 * most one positional argument (get only). Returns -1 when parsing succeeded, else an exit
 * status (0 after --help). */
typedef struct store_args {
    const char *store;
    const char *expect;
    const char *positional;
} store_args;

static int parse_args(int argc, char **argv, const char *help, bool takes_expect, bool takes_positional,
                      store_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (wk_cli_is_help(s)) {
            fputs(help, stdout);
            return WK_EXIT_OK;
        } else if (strcmp(s, "--store") == 0 && i + 1 < argc) {
            a->store = argv[++i];
        } else if (takes_expect && strcmp(s, "--expect") == 0 && i + 1 < argc) {
            a->expect = argv[++i];
        } else if (takes_positional && !a->positional && (s[0] != '-' || s[1] == 0)) {
            a->positional = s;
        } else {
            return wk_cli_usage("wirekit iltp %s: unknown, extra or incomplete argument '%s'", argv[0], s);
        }
    }
    if (!a->store || !*a->store) return wk_cli_usage("wirekit iltp %s: --store DIR is required", argv[0]);
    return -1;
}

/* Parses a hash given on the command line (canonical B64A of 32 bytes). */
static bool parse_hash(const char *text, uint8_t hash[32])
{
    size_t n;
    wk_error e;
    return strlen(text) == WK_STORE_HASH_TEXT_LEN &&
           wk_b64a_decode(text, WK_STORE_HASH_TEXT_LEN, hash, 32, &n, &e) == WK_OK && n == 32;
}

static void print_hash(const uint8_t hash[32])
{
    char text[WK_STORE_HASH_TEXT_LEN + 1];
    wk_b64a_encode(hash, 32, text);
    text[WK_STORE_HASH_TEXT_LEN] = 0;
    printf("%s\n", text);
}

static int finish_stdout(int rc)
{
    if (fflush(stdout) != 0 && rc == WK_EXIT_OK) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return rc;
}

int wk_cli_iltp_put(int argc, char **argv)
{
    store_args a;
    int rc = parse_args(argc, argv,
                        "usage: wirekit iltp put --store DIR [--expect HASH] < DATA\n"
                        "Stores stdin (at most 32 MiB) as a Blob in the store at DIR, creating DIR\n"
                        "and DIR/blobs if needed, and prints its H3 hash (B64A, one line): the hash\n"
                        "on the glyph line of `wirekit iltp blob`. Storing a Blob already present\n"
                        "writes nothing. Every write is atomic (temporary, fsync, rename).\n"
                        "  --expect HASH   refuse (exit 2, HOST_ERR_HASH_MISMATCH, nothing stored)\n"
                        "                  data whose hash differs\n",
                        true, false, &a);
    if (rc >= 0) return rc;
    uint8_t expect[32];
    if (a.expect && !parse_hash(a.expect, expect))
        return wk_cli_usage("--expect '%s' is not a 43-character B64A hash", a.expect);
    size_t len;
    bool too_long;
    uint8_t *data = wk_cli_read_all(stdin, WK_ILTP_BLOB_DATA_CAP, &len, &too_long);
    wk_error err;
    if (!data) {
        wk_error_set(&err, too_long ? WK_ERR_ILTP_BLOB_TOO_LARGE : WK_ERR_BACKEND, WK_NO_OFFSET,
                     too_long ? "Blob data over 32 MiB" : "cannot read stdin");
        return wk_cli_fail_usage(&err);
    }
    wk_store *s = wk_store_open(a.store, true, &err);
    if (!s) {
        free(data);
        return wk_cli_fail(&err);
    }
    uint8_t hash[32];
    if (wk_store_put(s, data, len, a.expect ? expect : NULL, hash, NULL, &err) != WK_OK) rc = wk_cli_fail(&err);
    else {
        print_hash(hash);
        rc = WK_EXIT_OK;
    }
    wk_store_close(s);
    free(data);
    return finish_stdout(rc);
}

int wk_cli_iltp_ls(int argc, char **argv)
{
    store_args a;
    int rc = parse_args(argc, argv,
                        "usage: wirekit iltp ls --store DIR\n"
                        "Prints the hash of every Blob in the store at DIR, one per line, sorted\n"
                        "(B64A sorts like the hash bytes). Contents are not read or verified.\n",
                        false, false, &a);
    if (rc >= 0) return rc;
    wk_error err;
    wk_store *s = wk_store_open(a.store, false, &err);
    if (!s) return wk_cli_fail(&err);
    uint8_t (*hashes)[32] = NULL;
    size_t n = 0;
    if (wk_store_list(s, &hashes, &n, &err) != WK_OK) rc = wk_cli_fail(&err);
    else {
        for (size_t i = 0; i < n; i++) print_hash(hashes[i]);
        rc = WK_EXIT_OK;
    }
    free(hashes);
    wk_store_close(s);
    return finish_stdout(rc);
}

int wk_cli_iltp_get(int argc, char **argv)
{
    store_args a;
    int rc = parse_args(argc, argv,
                        "usage: wirekit iltp get --store DIR HASH\n"
                        "Writes the data of the Blob HASH (43-character B64A) to stdout after\n"
                        "checking it against its hash. Exit 1 with HOST_ERR_NOT_FOUND for a Blob\n"
                        "not in the store, HOST_ERR_STORE_CORRUPT for a stored file that fails its\n"
                        "hash (nothing is written to stdout then).\n",
                        false, true, &a);
    if (rc >= 0) return rc;
    if (!a.positional) return wk_cli_usage("wirekit iltp get: HASH is required");
    uint8_t hash[32];
    if (!parse_hash(a.positional, hash))
        return wk_cli_usage("wirekit iltp get: '%s' is not a 43-character B64A hash", a.positional);
    wk_error err;
    wk_store *s = wk_store_open(a.store, false, &err);
    if (!s) return wk_cli_fail(&err);
    uint8_t *data = NULL;
    size_t len = 0;
    if (wk_store_get(s, hash, &data, &len, &err) != WK_OK) rc = wk_cli_fail(&err);
    else if (!wk_cli_write(data, len)) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    } else {
        rc = WK_EXIT_OK;
    }
    free(data);
    wk_store_close(s);
    return finish_stdout(rc);
}
