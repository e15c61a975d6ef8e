/* Private helpers shared by the `wirekit moqt` command files: cmd_moqt.c (dispatch, options,
 * decode, inspect, int) and cmd_moqt_encode.c (encode). The CLI only drives the library
 * (include/wirekit/moqt.h): no codec logic here, only JSON and text presentation. */
#ifndef WK_CLI_MOQT_H
#define WK_CLI_MOQT_H
#include "cli.h"

#define MOQT_IO_CHUNK 65536          /* bytes per stdin read when streaming */
#define MOQT_DATAGRAM_MAX (64u << 20) /* the largest datagram / JSON document read from stdin */
#define MOQT_PROPS_DEFAULT 65536u    /* default --max-properties (Properties block scratch) */

/* Which carrier the command reads or writes. */
typedef enum moqt_carrier {
    MOQT_CARRIER_NONE = 0, /* not given: inspect dispatches on the stream type */
    MOQT_CARRIER_SUBGROUP,
    MOQT_CARRIER_DATAGRAM,
    MOQT_CARRIER_FETCH
} moqt_carrier;

/* Options common to decode, encode and inspect. */
typedef struct moqt_opts {
    moqt_carrier carrier;
    wk_moqt_read_options read; /* group order, End of Range reading, strict padding, ... */
    uint64_t max_properties;   /* Properties block scratch size */
} moqt_opts;

/* Parses the options of a verb from argv[1..argc). `what` names the verb for messages; `help`
 * is printed for --help. Returns -1 when the verb should go on, else the exit status (0 after
 * --help, 1 on a usage error). */
int moqt_parse_opts(int argc, char **argv, const char *what, const char *help, bool need_carrier,
                    moqt_opts *o);

/* Prints err as one stderr line "CATEGORY NAME at offset N: message" (CATEGORY from
 * wk_moqt_error_category for moqt codes; omitted for other codes) and returns the exit status:
 * 3 for truncation, 2 for other peer errors, 1 for local and usage errors. */
int moqt_fail(const wk_error *err);
/* A usage-category error (bad JSON, missing key) reported like moqt_fail: exit 1. */
int moqt_fail_usage(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Writes p[0..n) to stdout and flushes; 0, or 1 with a message on failure. */
int moqt_put(const void *p, size_t n);
/* Writes p[0..n) to stdout (buffered: the stream driver flushes before each read); 0, or 1 with a
 * message on failure. */
int moqt_out(const void *p, size_t n);

/* Reads all of stdin (at most `limit` bytes) into a malloc'd buffer (caller frees). NULL with a
 * message printed (and *rc set) on failure or when the input is longer than limit. */
uint8_t *moqt_read_stdin(size_t limit, size_t *len, int *rc);

/* Names of Object Property types used as JSON keys: "prior_group_id_gap" (0x3C),
 * "prior_object_id_gap" (0x3E), else "0x<hex>" (lowercase, no leading zeros). Writes into buf. */
const char *moqt_property_name(uint64_t type, char *buf, size_t cap);
/* The type for a JSON key (a name above or "0x.."); false when it is neither. */
bool moqt_property_type(const char *name, uint64_t *type);

/* The verbs. argv[0] = the verb. */
int wk_cli_moqt_encode(int argc, char **argv);
#endif
