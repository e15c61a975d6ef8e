/* Private helpers of the `wirekit colloq` command files: cmd_colloq.c (dispatch, compile, run,
 * convert, verify). The CLI only drives the library
 * (include/wirekit/colloq.h): no codec logic here, only files, streams and presentation. */
#ifndef WK_CLI_COLLOQ_H
#define WK_CLI_COLLOQ_H
#include "cli.h"

#define COLLOQ_IO_CHUNK 65536             /* bytes per stdin read when streaming */
#define COLLOQ_FILE_MAX (64u << 20)       /* largest conversation, plan or trace file read */
#define COLLOQ_PREFACE_MAX 4096           /* longest preface line looked for (with its '\n') */

/* Loads --plan PATH (a conversation or a compiled plan) through wk_colloq_plan_load. NULL with one
 * stderr line and *rc set on failure: 1 when the file cannot be read, 2 when it does not compile
 * (the line names the error and the JSON path). */
wk_colloq_plan *colloq_load_plan(const char *path, int *rc);
/* `wirekit colloq gen` (cmd_colloq_gen.c): the plan's binary codec as C; argv[0] = "gen". */
int wk_cli_colloq_gen(int argc, char **argv);
#endif
