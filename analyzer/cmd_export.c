/* cmd_export.c - `iohint export`: traces as a fio iolog, Chrome/Perfetto
 * trace JSON or CSV. The formats are described in docs/export.md; the work
 * is done by export.c. A summary goes to stderr unless -q. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "export.h"

static const char usage_text[] =
    "usage: iohint export --format fio|perfetto|csv [-o FILE] [OPTIONS] TRACE|DIR...\n"
    "  -f, --format FMT       fio (iolog for fio --read_iolog), perfetto (Chrome trace\n"
    "                         JSON for ui.perfetto.dev), csv\n"
    "  -o, --output FILE      write to FILE instead of stdout\n"
    "      --path GLOB        only events on files whose path matches GLOB\n"
    "      --data-only        csv, perfetto: only data events (reads and copies)\n"
    "  -q, --quiet            no summary on stderr\n"
    "fio only:\n"
    "      --relocate DIR     replay on DIR/NNNN-NAME copies instead of the traced paths\n"
    "      --map FILE         write PATH<TAB>REPLAY_PATH<TAB>BYTES_NEEDED per file\n"
    "      --timed            version 3 iolog: replay with the program's timing\n"
    "      --stdio-buffer N   replay stdio reads as N-byte aligned refills (default 4096;\n"
    "                         0: the stdio calls as recorded)\n"
    "      --max-request N    split larger reads (default 8M; 0: only at 1 GiB, fio's limit)\n"
    "An option another format has no use for is an error (exit 2).\n";

/* "4096", "64k", "8M", "1G" -> bytes; -1 if malformed. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (*end == 'i' || *end == 'B' || *end == 'b')
        end += *end == 'i' && (end[1] == 'B' || end[1] == 'b') ? 2 : 1;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static void summary(const struct ioh_export_opts *o, const struct ioh_export_stats *st,
                    const char *to)
{
    if (o->format != IOH_EXPORT_FIO) {
        fprintf(stderr, "iohint export: %" PRIu64 " of %" PRIu64 " events from %" PRIu64
                        " trace%s to %s\n",
                st->written, st->events, st->traces, st->traces == 1 ? "" : "s", to);
        return;
    }
    fprintf(stderr, "iohint export: fio iolog v%d: %" PRIu64 " reads, %" PRIu64
                    " bytes on %u file%s from %" PRIu64 " trace%s to %s\n",
            o->timed ? 3 : 2, st->written, st->bytes, st->files, st->files == 1 ? "" : "s",
            st->traces, st->traces == 1 ? "" : "s", to);
    uint64_t skipped = st->skip_eof + st->skip_error + st->skip_nooff + st->skip_nonreg +
                       st->skip_name + st->skip_mmap;
    if (skipped)
        fprintf(stderr, "iohint export: not replayed: %" PRIu64 " at end of file, %" PRIu64
                        " failed, %" PRIu64 " without offset, %" PRIu64 " not regular files, %"
                        PRIu64 " unnameable, %" PRIu64 " mmap\n",
                st->skip_eof, st->skip_error, st->skip_nooff, st->skip_nonreg, st->skip_name,
                st->skip_mmap);
}

int ioh_cmd_export(int argc, char **argv)
{
    enum { O_PATH = 256, O_DATA, O_RELOCATE, O_MAP, O_TIMED, O_STDIO, O_MAXREQ };
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"path", required_argument, NULL, O_PATH},
        {"data-only", no_argument, NULL, O_DATA},
        {"relocate", required_argument, NULL, O_RELOCATE},
        {"map", required_argument, NULL, O_MAP},
        {"timed", no_argument, NULL, O_TIMED},
        {"stdio-buffer", required_argument, NULL, O_STDIO},
        {"max-request", required_argument, NULL, O_MAXREQ},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    struct ioh_export_opts o;
    ioh_export_opts_default(&o, 0);
    const char *output = NULL, *map = NULL;
    bool quiet = false, stdio_given = false, maxreq_given = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            o.format = ioh_export_format_parse(optarg);
            if (!o.format) {
                fprintf(stderr, "iohint export: unknown format '%s' (fio, perfetto, csv)\n",
                        optarg);
                return 2;
            }
            break;
        case 'o': output = optarg; break;
        case 'q': quiet = true; break;
        case O_PATH: o.path_glob = optarg; break;
        case O_DATA: o.data_only = true; break;
        case O_RELOCATE: o.relocate = optarg; break;
        case O_MAP: map = optarg; break;
        case O_TIMED: o.timed = true; break;
        case O_STDIO:
        case O_MAXREQ:
            *(c == O_STDIO ? &stdio_given : &maxreq_given) = true;
            if (parse_size(optarg, c == O_STDIO ? &o.stdio_buffer : &o.max_request) < 0) {
                fprintf(stderr, "iohint export: %s: bad size '%s'\n",
                        c == O_STDIO ? "--stdio-buffer" : "--max-request", optarg);
                return 2;
            }
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (!o.format || optind >= argc) {
        fprintf(stderr, "iohint export: %s\n", !o.format ? "--format is required"
                                                         : "no trace given");
        fputs(usage_text, stderr);
        return 2;
    }
    /* An option the format ignores is an error, not silence (found by a
     * tester: --data-only with fio, --stdio-buffer with perfetto). */
    if (o.format != IOH_EXPORT_FIO && (o.relocate || map || o.timed || stdio_given ||
                                       maxreq_given)) {
        fprintf(stderr, "iohint export: --relocate, --map, --timed, --stdio-buffer and "
                        "--max-request are for --format fio\n");
        return 2;
    }
    if (o.format == IOH_EXPORT_FIO && o.data_only) {
        fprintf(stderr, "iohint export: --data-only is for --format csv and perfetto (an iolog "
                        "holds only data events)\n");
        return 2;
    }
    if (o.relocate && !ioh_export_fio_name_ok(o.relocate, strlen(o.relocate))) {
        fprintf(stderr, "iohint export: --relocate: fio cannot use '%s' (blanks or too long)\n",
                o.relocate);
        return 2;
    }

    FILE *out = stdout, *mapf = NULL;
    if (output && !(out = fopen(output, "w"))) {
        fprintf(stderr, "iohint export: %s: %s\n", output, strerror(errno));
        return 1;
    }
    /* A failed export removes its half-written output: only a regular
     * file (as root, -o /dev/null and a bad trace would remove the device). */
    struct stat ost;
    int output_regular = output && fstat(fileno(out), &ost) == 0 && S_ISREG(ost.st_mode);
    if (map && !(mapf = fopen(map, "w"))) {
        fprintf(stderr, "iohint export: %s: %s\n", map, strerror(errno));
        if (output)
            fclose(out);
        return 1;
    }
    o.map = mapf;
    o.diag = quiet ? NULL : stderr;

    struct ioh_export_stats st = {0};
    char err[1024];
    int rc = ioh_export_traces(&o, (const char *const *)argv + optind, (size_t)(argc - optind),
                               out, &st, err, sizeof err);
    if (mapf && fclose(mapf) != 0 && rc == 0) {
        snprintf(err, sizeof err, "%s: %s", map, strerror(errno));
        rc = -EIO;
    }
    if (output && fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "%s: %s", output, strerror(errno));
        rc = -EIO;
    }
    if (rc < 0) {
        fprintf(stderr, "iohint export: %s\n", err);
        if (output_regular)
            unlink(output);
        return 1;
    }
    if (!quiet)
        summary(&o, &st, output ? output : "stdout");
    if (o.format == IOH_EXPORT_FIO && st.written == 0) {
        fprintf(stderr, "iohint export: no reads to replay: fio would refuse this iolog\n");
        return 1;
    }
    return 0;
}
