/* Private helpers shared by the `wirekit eth` command files (cmd_eth.c, cmd_eth_msg.c,
 * cmd_eth_reqresp.c). The CLI only drives the library: no codec code here. */
#ifndef WK_CLI_ETH_H
#define WK_CLI_ETH_H
#include "cli.h"

#define ETH_IO_CHUNK 65536 /* bytes per stdin read in the streaming commands */

/* Writes p[0..n) to stdout; returns 0, or 1 (local failure, message printed) on error. */
int eth_put(const void *p, size_t n);
/* Flushes stdout; turns a failure into exit status 1 when rc is still 0. */
int eth_finish_stdout(int rc);
/* Reads stdin into a malloc'd buffer (caller frees): at most `limit` bytes; *more says whether
 * input continues after them. NULL (message printed) on a read or allocation failure; an empty
 * input gives a non-NULL buffer with *len == 0. */
uint8_t *eth_read_input(uint64_t limit, size_t *len, bool *more);
/* True when stdin has at least one more byte (consumes it). */
bool eth_stdin_has_more(void);
/* Prints err as one line, its offset moved by `shift` (for offsets relative to a part of
 * stdin), and returns the exit status for it. */
int eth_fail_shift(wk_error *err, uint64_t shift);
/* Prints err as one line and returns `status` (for errors whose status the code does not
 * imply, e.g. an RLPx frame-size whose frame-data ends early: exit 3). */
int eth_fail_status(const wk_error *err, int status);
/* Marks err as a local (Integration) failure and prints it: exit 1. */
int eth_fail_local(const wk_error *err);
/* Parses the value of option `name` as a decimal in [min, max]; prints a usage line and returns
 * false on failure. */
bool eth_u64_opt(const char *name, const char *val, uint64_t min, uint64_t max, uint64_t *out);
/* The SSZ type bounds options: parses --min N / --max N at argv[*i] into *b; 1 when it was one of
 * them and valid (*i advanced), -1 on a usage error (printed), 0 when argv[*i] is another option. */
int eth_take_bounds(int argc, char **argv, int *i, wk_eth_ssz_bounds *b);
/* Prints a usage line and returns -1 when --min is above --max ("wirekit eth CMD: ..."), else 0. */
int eth_check_bounds(const char *cmd, const wk_eth_ssz_bounds *b);

/* The verbs of the message layers (cmd_eth_msg.c, cmd_eth_reqresp.c). argv[0] = the verb. */
int wk_cli_eth_rlpx_encode(int argc, char **argv);
int wk_cli_eth_rlpx_decode(int argc, char **argv);
int wk_cli_eth_gossip_encode(int argc, char **argv);
int wk_cli_eth_gossip_decode(int argc, char **argv);
int wk_cli_eth_reqresp_encode(int argc, char **argv);
int wk_cli_eth_reqresp_decode(int argc, char **argv);
#endif
