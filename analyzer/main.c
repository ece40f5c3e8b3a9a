/* main.c - the `iohint` command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ioh_config.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} g_cmds[] = {
    {"run", ioh_cmd_run, "run [-o DIR] [--no-trace] [-p POLICY] [-s] [-q] -- CMD [ARGS...]  trace a program, apply a policy"},
    {"dump", ioh_cmd_dump, "dump [--no-header] TRACE|DIR...                  print a trace"},
    {"analyze", ioh_cmd_analyze, "analyze [--json] [--html FILE] [--top N] [--all] [--ra-kb KB] [--stats] TRACE|DIR...  explain the reads"},
    {"export", ioh_cmd_export, "export --format fio|perfetto|csv [-o FILE] [--path GLOB] [OPTIONS] TRACE|DIR...  convert"},
    {"compare", ioh_cmd_compare, "compare [-n RUNS] [--cold|--hot] [-p POLICY]... [--json] -- CMD [ARGS...]  measure"},
};

static void usage(FILE *to)
{
    fprintf(to, "usage: iohint COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof g_cmds / sizeof g_cmds[0]; i++)
        fprintf(to, "  iohint %s\n", g_cmds[i].summary);
    fprintf(to, "\n  iohint --version | --help\n"
                "Every command's options, with what they do: iohint COMMAND --help.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("iohint %s\n", IOH_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof g_cmds / sizeof g_cmds[0]; i++)
        if (!strcmp(argv[1], g_cmds[i].name)) {
            /* getopt names the program argv[0] in its messages: "iohint run:
             * unrecognized option", not "run: ...". */
            char name[32];
            snprintf(name, sizeof name, "iohint %s", g_cmds[i].name);
            argv[1] = name;
            return g_cmds[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "iohint: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
