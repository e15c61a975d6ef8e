/* wirekit: `wirekit <module> <verb> [options]`, stdin to stdout. */
#include "cli.h"
#include <string.h>

static const wk_cli_command modules[] = {
    {"iltp", "ILTP (Lace-060/065): stream encoding, prefaces, offers, dictionary", wk_cli_iltp},
    {"blake3", "BLAKE3 hash, keyed hash, derive-key and extended output of stdin", wk_cli_blake3},
    {"b64a", "B64A encode and strict decode", wk_cli_b64a},
    {"eth", "Ethereum Snappy: snappy block/framed, RLPx frame-data, gossip and req/resp ssz_snappy", wk_cli_eth},
    {"moqt", "MoQT draft-20 data plane: subgroup and fetch streams, datagrams, padding", wk_cli_moqt},
    {"colloq", "Colloq plan codec (RFC-0005): compile, run, convert, verify", wk_cli_colloq},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: wirekit MODULE COMMAND [options]   (stdin to stdout)\n"
               "wirekit %s: sans-I/O wire codecs\n\nmodules and commands:\n", wk_version());
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        fprintf(f, "  wirekit %-8s %s\n", modules[i].name, modules[i].summary);
    fprintf(f, "\nRun 'wirekit MODULE --help' for the module's commands.\n"
               "Exit status: 0 ok, 1 usage or local failure, 2 invalid input, 3 input ended early,\n"
               "4 transport failure. Errors are one line on stderr: NAME [at offset N]: message.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return WK_EXIT_USAGE; }
    if (wk_cli_is_help(argv[1])) {
        usage(stdout);
        /* One line per command of every module. */
        char *help[] = {NULL, "--help", NULL};
        for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
            printf("\n");
            help[0] = (char *)modules[i].name;
            modules[i].run(2, help);
        }
        return WK_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) { printf("wirekit %s\n", wk_version()); return 0; }
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        if (strcmp(argv[1], modules[i].name) == 0) return modules[i].run(argc - 1, argv + 1);
    return wk_cli_usage("unknown module '%s' (see 'wirekit --help')", argv[1]);
}
