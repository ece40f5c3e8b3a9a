/* analysis.h - the in-memory model of one analysis: what every report (text,
 * JSON, HTML) is built from.
 *
 * An analysis is built in one pass over the records of one or many traces
 * merged in time order (analyzer/multireader.h does the merging): create it
 * with ioh_analysis_new(), announce each process with ioh_analysis_process(),
 * feed every record with ioh_analysis_feed(), then ioh_analysis_finish(). After
 * finish the model below is complete and read-only; reports only read it.
 *
 * Memory is proportional to processes, files, streams and call sites, never
 * to events: every per-file measure is a counter, a fixed-size histogram or
 * top-k table, a bitmap bounded per file (adaptive granularity), or a sample
 * of at most IOH_AN_MAX_POINTS points. The work per event is O(1) amortised
 * (see docs/analyze.md, "Cost").
 *
 * Definitions used throughout (docs/analyze.md has the full list):
 *   - a *read* is a data event (op class IOH_CLASS_DATA) with ret > 0 and
 *     off >= 0; its bytes are [off, off + ret). Reads returning 0 are EOFs,
 *     negative ones errors, and reads without an offset (pipes) are counted
 *     apart; none of those feed the pattern measures.
 *   - a *stream* is one open file description of one process (a trace's file
 *     id): one descriptor's life, shared by its dups.
 *   - a *file* is one (dev, ino) across all processes (the path when the
 *     identity is unknown); its reads are all its streams' reads in time order.
 *   - times are CLOCK_MONOTONIC ns as recorded; ioh_analysis.t0 is the
 *     earliest process start, and reports print times relative to it.
 *
 * Threads: an analysis is used by one thread at a time. Errors: functions
 * return 0 or -errno; ioh_analysis_new() returns NULL when out of memory.
 */
#ifndef IOH_ANALYSIS_H
#define IOH_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "classify.h"
#include "reader.h"

/* Request sizes: bucket 0 holds length 0, bucket b >= 1 holds [2^(b-1), 2^b). */
#define IOH_AN_SIZE_BUCKETS  64
/* Seek distances (start of a read minus the end of the previous read of the
 * same stream), signed log2: index IOH_AN_SEEK_ZERO holds 0 (consecutive);
 * IOH_AN_SEEK_ZERO + b holds forward gaps in [2^(b-1), 2^b), IOH_AN_SEEK_ZERO - b
 * the same distances backward. */
#define IOH_AN_SEEK_ZERO     64
#define IOH_AN_SEEK_BUCKETS  129
/* Throughput over time: this many equal buckets over the file's active span. */
#define IOH_AN_TIME_BUCKETS  64
/* Most common request sizes and strides kept per file and per stream. */
#define IOH_AN_TOPK          8
/* Call sites kept per file (space-saving by bytes; see docs/analyze.md). */
#define IOH_AN_FILE_SITES    16
/* Phases kept per file; more are merged, smallest neighbours first. */
#define IOH_AN_MAX_PHASES    32
/* Sample points of offset against time kept per file at most. */
#define IOH_AN_MAX_POINTS    20000
/* "No call site" in struct ioh_an_site_use.site. */
#define IOH_AN_NO_SITE       UINT32_MAX

/* Tunables of the analysis; ioh_an_params_default() fills the documented
 * defaults. */
struct ioh_an_params {
    uint64_t ra_bytes;          /* 128 KiB, the usual read_ahead_kb: the kernel read-ahead
                                   the models take for a file whose traces do not
                                   record its device's (ioh_an_file.ra_bytes) ... */
    bool     ra_forced;         /* ... or for every file (iohint analyze --ra-kb) */
    uint64_t willneed_max;      /* 256 MiB: largest file WILLNEED is considered for
                                   (`iohint analyze`: an eighth of mem_bytes if more) */
    uint64_t noreuse_min;       /* 64 MiB: smallest read-once footprint noreuse is added for */
    uint64_t mem_bytes;         /* 0 (unknown): the memory of the machine the traces ran on;
                                   noreuse only for a footprint above half of it (auto: a
                                   sequential file's size, policies/engine.c), never if
                                   unknown; `iohint analyze` sets this machine's, or --mem */
    double   latency_ns;        /* 70000: one request the program waits for (qd1 4 KiB) */
    double   request_ns;        /* 11000: device time of one overlapped request (qd32) */
    double   bandwidth;         /* 1.5 GiB/s: bytes per second fetched from storage */
    double   syscall_ns;        /* 500: one read() that reached the kernel */
    uint64_t max_points;        /* IOH_AN_MAX_POINTS: sample points per file */
    uint64_t points_budget;     /* 2,000,000: sample points over all files together */
    struct ioh_cls_params cls;  /* the classifier's; defaults from classify.h */
};

void ioh_an_params_default(struct ioh_an_params *p);

/* One traced process (one trace file). */
struct ioh_an_process {
    uint32_t index;             /* in ioh_analysis.processes */
    int32_t  pid, ppid;
    int32_t  parent;            /* index of the parent process in this analysis, -1 */
    char    *trace;             /* the trace file */
    char    *exe;
    char   **argv;              /* argc strings */
    uint32_t argc;
    char    *host, *cwd;
    uint32_t ptr_bits;
    uint64_t start_ns;          /* header start_mono_ns */
    uint64_t end_ns;            /* header end_mono_ns if finished, else the last event */
    bool     finished;          /* IOH_HDR_FINISHED */
    bool     ended_by_exec;     /* not finished: its last exec succeeded, the image
                                   ended there (the new one has a trace of its own) */
    uint32_t trace_flags;       /* IOH_HDR_* */
    uint32_t trace_version;     /* the trace's format version (header) */
    uint64_t dropped_events;    /* events the writer could not record */
    uint64_t events;            /* events in the trace */
    uint64_t reads, bytes;      /* data events that returned bytes (with an offset
                                   or not: pipes too) and those bytes, all files */
    uint64_t busy_ns;           /* time inside those reads */
    uint32_t streams;           /* streams opened */
    char    *warnings;          /* reader warnings (damaged or cut trace), NULL if none */
};

/* One frame of a call site. */
struct ioh_an_frame {
    uint64_t pc;
    uint64_t module_offset;
    uint32_t symbol_offset;
    char    *module;            /* full path as recorded, "" if unknown */
    char    *symbol;            /* "" if unknown */
};

/* One call site: identical stacks (modules and offsets) from different
 * processes are one site. */
struct ioh_an_site {
    uint32_t index;             /* in ioh_analysis.sites */
    uint32_t nframes;
    struct ioh_an_frame *frames;  /* frame 0: the caller of the read function */
    uint64_t reads, bytes;      /* over all files */
    uint32_t processes;         /* processes it was seen in */
};

/* A call site's share of one file. */
struct ioh_an_site_use {
    uint32_t site;              /* index in ioh_analysis.sites, or IOH_AN_NO_SITE */
    uint64_t reads, bytes;
};

/* One entry of a most-common table (request size, stride). count is exact
 * while the table never overflowed, else an upper bound (space-saving). */
struct ioh_an_count {
    int64_t  value;
    uint64_t count;
};

/* The measures shared by files and streams. */
struct ioh_an_metrics {
    uint64_t reads, bytes;      /* data reads and the bytes they returned */
    uint64_t eofs, errors;      /* reads that returned 0; that failed */
    uint64_t no_offset;         /* data events without a file offset (pipes) */
    uint64_t seeks;             /* lseek/fseek calls */
    /* Steps between successive reads of one stream (reads - 1 per stream):
     * consecutive starts where the previous ended; forward / backward jumped
     * (small gaps count as forward); overlap started inside the previous read. */
    uint64_t consecutive, forward, backward, overlap;
    uint64_t first_t, last_t;   /* start of the first and of the last read */
    uint64_t busy_ns;           /* sum of the reads' durations */
    uint64_t idle_ns;           /* between reads: (last end - first start) - busy, >= 0 */
    uint64_t min_off, max_end;  /* lowest offset read, end of the furthest read */
    uint64_t max_len;           /* largest request */
};

/* The predicted effect of one policy on one file, in seed 001's terms,
 * obtained by replaying the file's reads through the policy's model. */
struct ioh_an_effect {
    char     policy[48];        /* policy syntax: "sequential", "window=32M", ... */
    bool     valid;             /* the model ran (e.g. willneed needs the file size) */
    uint64_t reads;             /* reads replayed */
    uint64_t hits;              /* reads served without waiting for storage */
    uint64_t misses;            /* reads that waited for a fetch */
    uint64_t requests;          /* fetch operations issued to storage (sync + async) */
    uint64_t syscalls;          /* read calls that reached the kernel */
    uint64_t fetched;           /* bytes brought from storage */
    uint64_t unused;            /* of those, bytes no read ever used (page granularity) */
    uint64_t copied;            /* bytes read into coalescing blocks: each is copied
                                   twice, into the block and out to the program */
    double   hit_rate;          /* hits / reads */
    double   cost_ns;           /* the model's time estimate (docs/analyze.md) */
};

/* Policy models, one per candidate; the order is stable (JSON, tests). */
enum ioh_an_model {
    IOH_AN_M_DEFAULT = 0,       /* as is: kernel read-ahead up to params.ra_bytes, or
                                   what the program's own hint made of it */
    IOH_AN_M_SEQUENTIAL,        /* FADV_SEQUENTIAL: read-ahead up to 2 x ra_bytes */
    IOH_AN_M_RANDOM,            /* FADV_RANDOM: no read-ahead */
    IOH_AN_M_NOREUSE,           /* default read-ahead, pages dropped once read */
    IOH_AN_M_WILLNEED,          /* WILLNEED of the whole file at open, 2 MiB pieces each
                                   read as far as the read-ahead goes */
    IOH_AN_M_PREFETCH_2M,       /* look-ahead: [end, end + 2 MiB) kept fetched */
    IOH_AN_M_PREFETCH_16M,
    IOH_AN_M_WINDOW_4M,         /* sliding window of 4 MiB around the mean offset */
    IOH_AN_M_WINDOW_32M,
    IOH_AN_M_COALESCE_64K,      /* user-space cache of 64 KiB blocks for small reads */
    IOH_AN_M_COALESCE_512K,
    IOH_AN_MODELS
};

/* Parts of a recommendation. */
enum ioh_an_hint { IOH_AN_HINT_NONE = 0, IOH_AN_HINT_SEQUENTIAL, IOH_AN_HINT_RANDOM,
                   IOH_AN_HINT_WILLNEED, IOH_AN_HINT_NOREUSE };

struct ioh_an_recommendation {
    char     policy[64];        /* "none", "sequential", "random,coalesce=64K",
                                   "sequential,prefetch=16M,noreuse", ... */
    enum ioh_an_hint hint;
    bool     noreuse;           /* noreuse added to the hint */
    uint64_t prefetch;          /* look-ahead distance in bytes, 0 if none */
    uint64_t window;            /* sliding window size, 0 if none */
    uint64_t coalesce;          /* coalescing block size, 0 if none */
    enum ioh_an_model model;    /* the candidate chosen */
    enum ioh_an_hint overrides; /* the program's own hint the policy's hint vetoes
                                   (RANDOM or SEQUENTIAL), NONE */
    struct ioh_an_effect baseline;   /* the `none` model: what happened as is (the
                                        program's own hints included) */
    struct ioh_an_effect predicted;  /* the chosen policy's model */
    int64_t  requests_saved;    /* baseline.requests - predicted.requests */
    int64_t  syscalls_saved;    /* baseline.syscalls - predicted.syscalls */
    double   speedup;           /* baseline.cost_ns / predicted.cost_ns */
    char     reason[384];       /* one line: why this policy */
    /* baseline.cost_ns over the time the traced reads took (m.busy_ns),
     * when a policy is recommended and that is 2 or more (and over 1 ms
     * apart): the model thought the reads slower as they are than the trace
     * shows them, so the speed-up it predicts is in doubt; 0 otherwise. */
    double   model_vs_trace;
};

/* Where a file's read-ahead (ioh_an_file.ra_bytes) came from. */
enum ioh_an_ra_source {
    IOH_AN_RA_OLD_TRACE = 0,    /* params.ra_bytes: its traces are older than format 4,
                                   which does not record it */
    IOH_AN_RA_UNKNOWN,          /* params.ra_bytes: the traces say the shim could not
                                   learn the device's (trace_format.h, IOH_RA_UNKNOWN) */
    IOH_AN_RA_TRACE,            /* recorded in a trace: the device's read_ahead_kb */
    IOH_AN_RA_OPTION,           /* params.ra_forced (--ra-kb) */
};
const char *ioh_an_ra_source_name(enum ioh_an_ra_source s);   /* "trace", "unknown", ... */

/* One file. */
struct ioh_an_file {
    uint32_t index;             /* in ioh_analysis.files */
    uint64_t dev, ino;
    char    *path;              /* as first announced */
    int64_t  size;              /* st_size when first announced (largest seen) */
    uint32_t kind;              /* enum ioh_file_kind */
    uint32_t path_flags;        /* IOH_PATH_* of any announcement, or'ed */
    uint32_t processes;         /* processes that opened it */
    uint32_t writable_streams;  /* streams opened for writing (O_WRONLY, O_RDWR) */
    uint32_t nstreams;
    uint32_t *streams;          /* indices in ioh_analysis.streams, in open order */
    /* The kernel read-ahead its policy models took: the first that an
     * announcement of it recorded before its first read (the models start
     * there), else params.ra_bytes; and where it came from. */
    uint64_t ra_bytes;
    enum ioh_an_ra_source ra_source;
    /* Not from its trace (unknown, old, the default): the read-ahead that
     * another path record, of any process, recorded for its device, when
     * that differs from ra_bytes (it came after the models had started:
     * a threaded process or an old trace read the file first); else 0. */
    uint64_t ra_device;
    /* The class's window evidence is the whole file's window median (its
     * main phase's evidence had none: analysis.c), not the phase's. */
    bool     window_whole;

    struct ioh_an_metrics m;
    uint64_t footprint;         /* distinct bytes read (at bitmap granularity, see granule) */
    uint64_t shared_reads;      /* reads that went through a shared description
                                   (flag SHARED: coalescing cannot serve their read()s) */
    uint64_t stdio_reads;       /* reads made through stdio (fread, fgets,
                                   getline, getc, fscanf: glibc buffers them already) */
    /* Some of its shared reads were made while another process read the
     * file through a shared description too (a stream of each with reads
     * flagged SHARED, their spans of reads overlapping in time): the shim
     * reads such a read's offset back from the kernel after the read, which
     * the other process may have moved meanwhile, so the offsets, and the
     * footprint, re-reads and steps built on them, are approximate. */
    bool     offsets_approximate;
    uint64_t writable_reads;    /* reads through descriptions opened for writing too
                                   (O_RDWR: the shim keeps no block for them) */
    uint64_t granule;           /* bytes per footprint bit at the end */
    double   reread_ratio;      /* 1 - footprint / bytes: share of bytes read again */
    uint64_t mmaps;             /* mmap calls on it (page faults are not traced) */
    uint64_t mapped_bytes;
    uint32_t advice_mask;       /* 1 << POSIX_FADV_* the programs themselves gave */
    uint64_t advised_random_reads;      /* reads made while the program's own FADV_RANDOM
                                           held on their stream (no read-ahead as is) ... */
    uint64_t advised_sequential_reads;  /* ... its own FADV_SEQUENTIAL (read-ahead doubled) */
    uint64_t advised_fetched;   /* bytes its own WILLNEEDs and readahead(2) fetched as is */

    /* What a policy did to this file (traces made with iohint run -p): the
     * trace's `policy` events (aux = enum ioh_pol_act, policies/policy.h) and
     * the reads served from a coalescing block (IOH_EV_SERVED). */
    struct ioh_an_applied {
        uint64_t served_reads, served_bytes;
        uint64_t actions[9];    /* count per enum ioh_pol_act (1..8) */
        uint64_t refill_bytes;  /* read into coalescing blocks */
        uint64_t prefetch_bytes;
        uint64_t drop_bytes;
        uint32_t decided_class; /* the last `decide`: enum ioh_cls_class ... */
        uint32_t decided_flags; /* ... and the actions (IOH_ACT_*, policies/spec.h) */
        uint32_t last_hint;     /* the last advice applied or overriding (POSIX_FADV_*) */
    } applied;

    uint64_t size_hist[IOH_AN_SIZE_BUCKETS];      /* requested length (len) of reads */
    struct ioh_an_count top_sizes[IOH_AN_TOPK];   /* most common lengths, count desc */
    uint32_t ntop_sizes;
    uint64_t seek_hist[IOH_AN_SEEK_BUCKETS];      /* per stream, see IOH_AN_SEEK_ZERO */
    struct ioh_an_count top_strides[IOH_AN_TOPK]; /* start-to-start jumps, count desc */
    uint32_t ntop_strides;

    /* The window (smallest span holding params.cls.window_share of each
     * IOH_CLS_RING consecutive reads), sampled every IOH_CLS_RING reads. */
    uint32_t window_samples;
    uint64_t window_median, window_p90, window_max;
    double   drift_per_read;    /* bytes per read the window centre moved, median */
    double   drift_per_sec;

    /* Throughput: bucket i covers [tp_t0 + i*tp_width, tp_t0 + (i+1)*tp_width). */
    uint64_t tp_t0, tp_width;
    uint64_t tp_bytes[IOH_AN_TIME_BUCKETS];
    uint64_t tp_reads[IOH_AN_TIME_BUCKETS];

    /* Call sites, most bytes first; top_by_reads indexes sites[] by reads. */
    uint32_t nsites;
    struct ioh_an_site_use sites[IOH_AN_FILE_SITES];
    uint8_t  top_by_reads[IOH_AN_FILE_SITES];

    /* The class: that of the phase holding the most reads, with its evidence
     * (the classifier's result for that phase). UNKNOWN below min_reads. */
    enum ioh_cls_class cls;
    double   confidence;
    bool     small;
    struct ioh_cls_result detail;
    uint32_t nphases;           /* at most IOH_AN_MAX_PHASES */
    struct ioh_cls_phase *phases;
    uint32_t main_phase;        /* index in phases of the class's phase */
    /* The way each stream's reads jump, over all its streams' steps:
     * ASCENDING when none went back, DESCENDING when none went forward,
     * RANDOM when both, NONE without jumps. The class's order (detail) is
     * that of the reads of all streams in time order, which is random for
     * many processes that each read forward from their own start. */
    enum ioh_cls_order stream_order;

    /* Per-model predictions (ordered as enum ioh_an_model) and the choice. */
    struct ioh_an_effect effects[IOH_AN_MODELS];
    double   model_sample;      /* share of the reads the models replayed: 1, or less
                                   when a file with very many runs was sampled
                                   (docs/analyze.md, "Cost") */
    struct ioh_an_recommendation rec;

    /* Offset against time, decimated evenly over the reads: every
     * point_stride-th read. phase indexes phases[]. */
    struct ioh_an_point {
        uint64_t t;
        int64_t  off;
        uint32_t len;           /* bytes returned */
        uint32_t phase;
        uint64_t index;         /* the read's index among the file's events fed */
    } *points;
    uint32_t npoints;
    uint64_t point_stride;

    double   importance;        /* bytes + 4096 * reads: the ranking key */
    bool     pseudo;            /* under /proc or /sys: no policy can help it, so it
                                   ranks after every other file */
    bool     significant;       /* enough reads to classify (cls != UNKNOWN) */

    struct ioh__file_state *state;  /* private, NULL after finish */
};

/* One stream: one open file description of one process. */
struct ioh_an_stream {
    uint32_t index;             /* in ioh_analysis.streams */
    uint32_t process;           /* index in ioh_analysis.processes */
    uint32_t file;              /* index in ioh_analysis.files */
    uint32_t trace_file;        /* the file id in its trace */
    int32_t  fd;                /* descriptor of its first event, -1 */
    uint32_t path_flags;        /* IOH_PATH_* */
    uint32_t open_flags;
    uint64_t open_t;            /* announcement time */
    uint64_t close_t;           /* close time, 0 if never closed in the trace */
    struct ioh_an_metrics m;
    enum ioh_cls_class cls;     /* the class that held for most of its reads */
    double   confidence;
    uint64_t request_size;      /* the most common request length */
    int64_t  stride;            /* the most common start-to-start jump, 0 */
    uint64_t shared_reads;      /* its data reads that carry the flag SHARED */
    uint64_t stdio_reads;       /* its data reads made by stdio (fread, fgets...) */

    struct ioh__stream_state *state;  /* private, NULL after finish */
};

struct ioh_analysis {
    struct ioh_an_params params;
    uint64_t t0, t1;            /* earliest process start, latest event or end */
    uint64_t events;            /* records fed */
    uint64_t data_events;       /* events of class DATA */
    uint64_t reads, bytes;      /* as ioh_an_process.reads, bytes: all processes */
    uint64_t untraced;          /* processes that ran untraced to keep IOHINT_TRACE_RESERVE
                                   free (their *.untraced marks; set by the caller) */

    uint32_t nprocesses, nfiles, nstreams, nsites;
    struct ioh_an_process *processes;
    struct ioh_an_file *files;          /* in first-seen order */
    struct ioh_an_stream *streams;
    struct ioh_an_site *sites;

    uint32_t *ranked;           /* file indices, most important first (after finish) */
    bool     finished;

    struct ioh__analysis_state *state;  /* private */
};

/* The file's size as far as its reads show it: st_size when opened (the
 * largest seen), or the end of the furthest read when the file grew while
 * it was read (a log, an output read back). Shares ("% of the file") are
 * of this: of st_size, a file that grew read as 1925% of itself (found by
 * a tester). 0 when neither is known. */
static inline uint64_t ioh_an_file_extent(const struct ioh_an_file *f)
{
    return f->size > 0 && (uint64_t)f->size > f->m.max_end ? (uint64_t)f->size : f->m.max_end;
}

/* Files the run read from (a file only opened, such as a redirected
 * output, is not one): the count every report gives. */
static inline uint32_t ioh_an_files_read(const struct ioh_analysis *an)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < an->nfiles; i++)
        n += an->files[i].m.reads > 0;
    return n;
}

struct ioh_analysis *ioh_analysis_new(const struct ioh_an_params *p);
void ioh_analysis_free(struct ioh_analysis *an);

/* Announce a process: its trace header and strings come from r, which must
 * stay open while its records are fed. Returns the process index (>= 0) to
 * pass to ioh_analysis_feed(), or -errno. */
int ioh_analysis_process(struct ioh_analysis *an, const struct ioh_reader *r);

/* One record of process proc, in time order across all processes. The
 * record's memory need only live for the call, except that the reader that
 * produced it must stay open (path and site lookups). */
void ioh_analysis_feed(struct ioh_analysis *an, uint32_t proc, const struct ioh_record *rec);
/* Feed every record of reader r, which must be process proc's: what calling
 * ioh_reader_next() and ioh_analysis_feed() in turn does, faster (one
 * trace: no merge). */
void ioh_analysis_feed_reader(struct ioh_analysis *an, uint32_t proc, struct ioh_reader *r);

/* Complete the model: flush the models, close phases, rank files, resolve
 * parents. Returns 0 or -ENOMEM. */
int ioh_analysis_finish(struct ioh_analysis *an);

/* Files by importance (after finish): the rank-th most important file, NULL
 * past the end. */
const struct ioh_an_file *ioh_analysis_file_ranked(const struct ioh_analysis *an, size_t rank);

/* Names. */
const char *ioh_an_model_policy(enum ioh_an_model m);   /* "sequential", "window=32M" ... */
const char *ioh_an_hint_name(enum ioh_an_hint h);       /* "none", "sequential", ... */

/* Reports, all reading a finished analysis. Return 0 or -errno. */
struct ioh_report_opts {
    uint32_t top;               /* files to show (text) or list (JSON); 0: all */
    bool     all;               /* include files with too few reads to classify */
};
int ioh_report_text(const struct ioh_analysis *an, const struct ioh_report_opts *o, FILE *out);
int ioh_report_json(const struct ioh_analysis *an, const struct ioh_report_opts *o, FILE *out);
/* What the policy a trace was made under did to file f ("auto chose ...;
 * prefetched ..."), as the text report's `applied` line says it, without
 * the label: 1 if anything (written to o unless NULL), else 0. */
int ioh_report_applied(FILE *o, const struct ioh_an_file *f);
/* The text report's lines on the read-ahead the models took ("  models
 * assume a read-ahead of ...", notes), each ending in a newline; whether
 * the files' values differ. */
bool ioh_report_readahead(FILE *o, const struct ioh_analysis *an);
/* One self-contained HTML page (analyzer/report_html.c, owned by the HTML
 * report); declared here until analyzer/report_html.h exists. */
int ioh_report_html(const struct ioh_analysis *an, const char *path);

#endif
