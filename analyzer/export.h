/* export.h - traces in other tools' formats: a fio iolog that `fio
 * --read_iolog` replays, Chrome trace-event JSON that ui.perfetto.dev opens,
 * and CSV. Used by `iohint export` (cmd_export.c); the formats and their
 * limits are documented in docs/export.md.
 *
 * Two layers. ioh_export_traces() opens trace files (or directories of them),
 * merges their records by time and feeds a writer. A writer
 * (ioh_export_writer_*) turns a stream of struct ioh_export_event into one
 * format; it knows nothing about trace files, so unit tests drive it with
 * synthetic events. The small text helpers at the end (CSV fields, JSON
 * strings, fio names) are exposed for the tests and for other reports.
 *
 * Memory grows with the number of traces, files and processes, never with the
 * number of events: every format is written as the events stream by.
 *
 * Errors: functions return 0 or a negative errno; ioh_export_traces() also
 * writes a message into err. Problems that do not stop the export (a read
 * that fio cannot replay, a replay file that is missing) are counted in
 * struct ioh_export_stats and, when opts.diag is set, explained there once.
 * Not thread-safe per writer; distinct writers are independent.
 */
#ifndef IOH_EXPORT_H
#define IOH_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

enum ioh_export_format {
    IOH_EXPORT_FIO = 1,        /* fio iolog, version 2 (or 3 with timed) */
    IOH_EXPORT_PERFETTO,       /* {"traceEvents":[...]}: X, C and M events */
    IOH_EXPORT_CSV,            /* header + one line per event */
};

/* Parses "fio", "perfetto" (or "chrome", "json"), "csv"; 0 if unknown. */
enum ioh_export_format ioh_export_format_parse(const char *name);

struct ioh_export_opts {
    enum ioh_export_format format;
    const char *path_glob;     /* only events on paths matching it (fnmatch), NULL: all */
    bool data_only;            /* csv, perfetto: only data events (reads and copies) */
    FILE *diag;                /* warnings and the summary go here; NULL: silent */

    /* fio only */
    const char *relocate;      /* directory the replay files live in; NULL: traced paths */
    bool timed;                /* version 3 iolog: each line carries its time (us) */
    uint64_t stdio_buffer;     /* stdio reads replayed as aligned refills of this size;
                                  0: the stdio calls as recorded */
    uint64_t max_request;      /* larger reads are split; 0: only at fio's limit */
    FILE *map;                 /* if set: "PATH\tREPLAY_PATH\tBYTES_NEEDED\n" per file */
};

/* Fills the documented defaults (stdio_buffer 4096, max_request 8 MiB). */
void ioh_export_opts_default(struct ioh_export_opts *o, enum ioh_export_format format);

struct ioh_export_stats {
    uint64_t traces;           /* trace files read */
    uint64_t events;           /* events seen (all ops) */
    uint64_t written;          /* events written (csv lines, perfetto X events, fio reads) */
    uint64_t bytes;            /* fio: bytes of the read lines */
    uint32_t files;            /* fio: files in the log */
    uint32_t files_unusable;   /* fio: files whose replay copy is missing or too small */
    /* fio: data events not replayed, by reason */
    uint64_t skip_eof;         /* returned 0: at or past the end of the file */
    uint64_t skip_error;       /* returned an error */
    uint64_t skip_nooff;       /* no file offset (pipe, socket, tty, unknown stream) */
    uint64_t skip_nonreg;      /* not a regular file, or a procfs/sysfs/devfs file */
    uint64_t skip_name;        /* a path fio cannot parse (blank, > 255 bytes) */
    uint64_t skip_mmap;        /* mapped ranges: page faults are not traced */
    uint64_t skip_filter;      /* events left out by path_glob or data_only */
};

/* One event as a writer sees it. (src, ev->file) names one open file
 * description: file ids are per trace. */
struct ioh_export_event {
    const struct ioh_event *ev;
    uint64_t t_ns;                       /* since the export's time base */
    int32_t pid;
    uint32_t src;                        /* index of its trace among the inputs */
    const struct ioh_rec_path *file;     /* the file (for close: the one closed), or NULL */
    const char *site;                    /* call site as text, "" if none */
};

/* One traced process, announced before its events. */
struct ioh_export_process {
    int32_t pid;
    int32_t ppid;
    uint32_t src;
    const char *name;                    /* the command line, shortened */
    const char *host;
};

struct ioh_export_writer;

/* out stays the caller's: finish flushes it but does not close it. opts is
 * copied (its FILE pointers are borrowed). NULL on allocation failure. */
struct ioh_export_writer *ioh_export_writer_new(const struct ioh_export_opts *opts, FILE *out);
int ioh_export_writer_process(struct ioh_export_writer *w, const struct ioh_export_process *p);
int ioh_export_writer_event(struct ioh_export_writer *w, const struct ioh_export_event *e);
/* Ends the output, adds the writer's counts to *st (may be NULL) and frees w.
 * Returns 0 or -errno (a write error on out). */
int ioh_export_writer_finish(struct ioh_export_writer *w, struct ioh_export_stats *st);

/* Reads inputs (trace files or directories of *.iohtrace) merged by time and
 * writes them to out. Traces from one host are merged on the monotonic clock;
 * traces from several hosts on wall-clock time. Returns 0 or -errno with a
 * message in err. */
int ioh_export_traces(const struct ioh_export_opts *opts, const char *const *inputs,
                      size_t ninputs, FILE *out, struct ioh_export_stats *st, char *err,
                      size_t errlen);

/* Text helpers. */

/* A CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, or
 * starts or ends with a blank; quotes inside are doubled. */
void ioh_export_csv_field(FILE *f, const char *s, size_t n);
/* A JSON string with its quotes: ", \ and control characters escaped, bytes
 * that are not valid UTF-8 written as U+FFFD so the output is valid JSON. */
void ioh_export_json_string(FILE *f, const char *s, size_t n);
/* Whether fio can read this path back from an iolog line (fio scans names
 * with "%256s": no blanks, at most 255 bytes, not empty). */
bool ioh_export_fio_name_ok(const char *s, size_t n);
/* A call site's first frame as text: "module+0xOFF" or
 * "module+0xOFF (symbol+0xOFF)"; "" for NULL. Returns strlen of buf. */
size_t ioh_export_site_text(const struct ioh_rec_site *s, char *buf, size_t len);

#endif
