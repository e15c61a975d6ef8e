/* Shared pieces of the wirekit CLI. Exit statuses follow the CLI convention. */
#ifndef WK_CLI_H
#define WK_CLI_H
#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>
#include <wirekit/wirekit.h>

enum {
    WK_EXIT_OK = 0,
    WK_EXIT_USAGE = 1,     /* usage error or local failure */
    WK_EXIT_INVALID = 2,   /* invalid input: the peer's fault */
    WK_EXIT_TRUNCATED = 3, /* input ended early */
    WK_EXIT_TRANSPORT = 4  /* transport failure */
};

/* A command: name, one-line summary, entry point (argv[0] is the command name). */
typedef struct wk_cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} wk_cli_command;

/* Module entry points: each dispatches `wirekit MODULE VERB ...` (argv[0] = MODULE). */
int wk_cli_iltp(int argc, char **argv);
int wk_cli_blake3(int argc, char **argv);
int wk_cli_b64a(int argc, char **argv);
int wk_cli_eth(int argc, char **argv); /* wirekit eth (cmd_eth.c): Ethereum Snappy */
int wk_cli_moqt(int argc, char **argv); /* wirekit moqt (cmd_moqt.c): MoQT draft-20 data plane */
int wk_cli_colloq(int argc, char **argv); /* wirekit colloq (cmd_colloq.c): Colloq plan codec */
int wk_cli_iltp_demo(int argc, char **argv);
int wk_cli_iltp_items(int argc, char **argv);
int wk_cli_iltp_blob(int argc, char **argv);
int wk_cli_iltp_sync(int argc, char **argv);

/* Prints "wirekit MODULE: one line per command" for a command table. */
void wk_cli_print_commands(FILE *f, const char *module, const wk_cli_command *cmds, size_t n);
/* Dispatches argv[1] among cmds; handles --help/-h and unknown commands (exit 1). */
int wk_cli_dispatch(const char *module, const char *summary, const wk_cli_command *cmds, size_t n,
                    int argc, char **argv);

/* Prints err as one line on stderr ("NAME at offset N: message") and returns the exit status
 * for it: 3 for truncation, 2 for other PeerProtocol errors, 4 for Transport, 1 otherwise. */
int wk_cli_fail(const wk_error *err);
/* Prints err as wk_cli_fail does and returns 1 (WK_EXIT_USAGE) whatever its category: the user's
 * input or flags are at fault (a Blob over the cap on stdin, an invalid address argument). */
int wk_cli_fail_usage(const wk_error *err);
/* The exit status for err without printing anything. */
int wk_cli_exit_for(const wk_error *err);
/* Prints "usage: ..." style message on stderr and returns 1. */
int wk_cli_usage(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Parses a decimal unsigned integer in [min, max]; false on anything else. */
bool wk_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Reads all of f into a malloc'd buffer (caller frees), at most `limit` bytes; returns NULL on
 * read failure or when the input is longer than limit (*too_long set). */
uint8_t *wk_cli_read_all(FILE *f, size_t limit, size_t *len, bool *too_long);
/* Writes n bytes to stdout; false on failure. */
bool wk_cli_write(const void *p, size_t n);
/* The streaming commands' read: first flushes stdout (everything decoded so far is written
 * before the command waits for more input), then reads what stdin has, 1..cap bytes (read(2):
 * it does not wait for cap bytes to arrive). *got = 0 at EOF. Returns 0, or exit status 1 with
 * one stderr line when stdout cannot be written or stdin cannot be read. Do not mix with stdio
 * reads of stdin before it (stdio's buffer would hold bytes read(2) never sees). */
int wk_cli_read_some(void *buf, size_t cap, size_t *got);
/* True if argv[i] is --help or -h. */
bool wk_cli_is_help(const char *arg);
/* Matches the option `--name VALUE` or `--name=VALUE` at argv[*i]: true with *val = the value
 * (NULL when `--name` is the last argument) and *i past it; false when argv[*i] is something else
 * (`--name-other` included). *val points into argv. */
bool wk_cli_take(int argc, char **argv, int *i, const char *name, const char **val);
int wk_cli_iltp_nonce(int argc, char **argv);   /* wirekit iltp nonce (Lace-060) */
int wk_cli_iltp_address(int argc, char **argv); /* wirekit iltp address (Lace-060) */
int wk_cli_iltp_put(int argc, char **argv); /* wirekit iltp put --store DIR (host Blob store) */
int wk_cli_iltp_ls(int argc, char **argv);  /* wirekit iltp ls --store DIR */
int wk_cli_iltp_get(int argc, char **argv); /* wirekit iltp get --store DIR HASH */
#endif
