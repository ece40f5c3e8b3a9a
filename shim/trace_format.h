/* trace_format.h - the native trace format: the one contract between the shim
 * (writer, shim/trace.c) and the analyzer (reader, analyzer/reader.c).
 *
 * A trace is one file per process, written through a MAP_SHARED mapping so that
 * whatever was committed survives SIGKILL, _exit and exec. Layout:
 *
 *   [0, header_size)              struct ioh_trace_header, then its strings
 *   [header_size, seg_end)        segments of seg_size bytes each
 *
 * Each thread claims whole segments (an atomic add on header.seg_end) and
 * appends records to its current one. A segment starts with struct
 * ioh_seg_header; its `used` field counts the record bytes after the header
 * that are complete: a record is written first and then published by a release
 * store of `used`, so a reader never sees half a record. A segment whose magic
 * is not IOH_SEG_MAGIC was claimed but never started and is skipped.
 *
 * Records are 8-byte aligned and start with struct ioh_rec (type, size in 8-byte
 * units). Events are fixed 64-byte records, or 32-byte compact ones that
 * continue the event just before them; paths and call sites are variable.
 * All integers are little-endian (the writer's native order on x86_64/i386).
 *
 * Times are CLOCK_MONOTONIC nanoseconds (comparable between processes of one
 * boot); header.start_realtime_ns maps them to wall-clock time.
 *
 * Compatibility: readers reject versions outside [IOH_TRACE_VERSION_MIN,
 * IOH_TRACE_VERSION]. Any change to a
 * struct below or to an op number bumps it. See docs/trace-format.md.
 */
#ifndef IOH_TRACE_FORMAT_H
#define IOH_TRACE_FORMAT_H

#include <stdint.h>

#include "trace_ops.h"

#define IOH_TRACE_MAGIC   "IOHTRACE"     /* 8 bytes, no terminator */
#define IOH_TRACE_VERSION 4u        /* 2: compact events (struct ioh_event_short);
                                       3: continuation events (struct ioh_event_next);
                                       4: the device's read-ahead in path records */
#define IOH_TRACE_VERSION_MIN 1u    /* readers also take versions 1 to 3: the
                                       same, without the later record types, and
                                       with path records IOH_REC_PATH_V3_SIZE long */
#define IOH_SEG_MAGIC     0x31474553u    /* "SEG1" */

enum ioh_op {
#define IOH_OP_ENUM(name, str, cls) IOH_OP_##name,
    IOH_TRACE_OPS(IOH_OP_ENUM)
#undef IOH_OP_ENUM
    IOH_OP_COUNT
};

enum ioh_op_class { IOH_CLASS_DATA, IOH_CLASS_MAP, IOH_CLASS_SEEK, IOH_CLASS_HINT,
                    IOH_CLASS_FD, IOH_CLASS_PROC };

/* header.flags */
#define IOH_HDR_TRUNCATED  0x1u   /* IOHINT_TRACE_MAX reached; dropped_events lost */
#define IOH_HDR_FAILED     0x2u   /* the trace could not grow (disk full, ...) */
#define IOH_HDR_FINISHED   0x4u   /* the process ended normally; end_mono_ns set */
#define IOH_HDR_RESERVE    0x8u   /* with FAILED: stopped to leave IOHINT_TRACE_RESERVE free */

struct ioh_trace_header {
    char     magic[8];             /* IOH_TRACE_MAGIC */
    uint32_t version;              /* IOH_TRACE_VERSION */
    uint32_t header_size;          /* bytes before the first segment */
    uint32_t seg_size;             /* bytes per segment, header included */
    uint32_t flags;                /* IOH_HDR_*; written with atomic or */
    uint64_t seg_end;              /* atomic: end of the last claimed segment */
    uint64_t max_size;             /* IOHINT_TRACE_MAX in force */
    uint64_t dropped_events;       /* atomic: events lost to the size bound */
    int32_t  pid;
    int32_t  ppid;
    uint64_t start_realtime_ns;    /* CLOCK_REALTIME at start ... */
    uint64_t start_mono_ns;        /* ... and CLOCK_MONOTONIC at the same instant */
    uint64_t end_mono_ns;          /* 0 unless IOH_HDR_FINISHED */
    uint32_t ptr_bits;             /* 32 or 64: the word size of the process */
    uint32_t argc;                 /* strings in argv */
    /* Offsets from the start of the file of NUL-terminated strings inside the
     * header area; argv is argc strings back to back. */
    uint32_t exe_off;              /* /proc/self/exe */
    uint32_t argv_off;
    uint32_t host_off;             /* uname nodename */
    uint32_t cwd_off;
    uint64_t reserved[8];
};

struct ioh_seg_header {
    uint32_t magic;                /* IOH_SEG_MAGIC once the segment is started */
    uint32_t tid;                  /* the one thread that writes this segment */
    uint32_t used;                 /* atomic: committed record bytes after this header */
    uint32_t seq;                  /* per-thread segment number, from 0 */
    uint64_t t_start;              /* CLOCK_MONOTONIC ns when claimed */
    uint64_t reserved;
};

/* Record types. */
enum ioh_rec_type {
    IOH_REC_EVENT = 1,   /* struct ioh_event */
    IOH_REC_PATH  = 2,   /* struct ioh_rec_path + path bytes */
    IOH_REC_SITE  = 3,   /* struct ioh_rec_site + frames */
    IOH_REC_EVENT_SHORT = 4, /* struct ioh_event_short (version 2) */
    IOH_REC_EVENT_NEXT  = 5, /* struct ioh_event_next (version 3) */
};

struct ioh_rec {
    uint16_t type;                 /* enum ioh_rec_type */
    uint16_t size8;                /* record size in 8-byte units */
};

/* event.flags */
#define IOH_EV_SHARED     0x1u     /* the offset was read back from the kernel */
#define IOH_EV_NOOFF      0x2u     /* no file offset (pipe, socket, tty) */
#define IOH_EV_FORTIFY    0x4u     /* reached through a _chk entry point */
#define IOH_EV_SIGNAL     0x8u     /* nested inside another wrapper on this thread */
#define IOH_EV_SERVED     0x10u    /* served by a policy (coalescing block), not the kernel */

struct ioh_event {                 /* 64 bytes */
    uint16_t type;                 /* IOH_REC_EVENT */
    uint16_t size8;                /* 8 */
    uint16_t op;                   /* enum ioh_op */
    uint16_t flags;                /* IOH_EV_* */
    uint32_t tid;
    int32_t  fd;
    uint64_t t;                    /* start, CLOCK_MONOTONIC ns */
    int64_t  off;                  /* file offset of the request, -1 if none */
    uint64_t len;                  /* requested bytes */
    int64_t  ret;                  /* result (bytes, fd, pid) or -errno */
    uint32_t dur;                  /* time inside the real call: ioh_dur_decode */
    uint32_t file;                 /* file id (IOH_REC_PATH), 0 if none */
    uint32_t site;                 /* call-site id (IOH_REC_SITE), 0 if none */
    uint32_t aux;                  /* op-specific: flags, whence, advice, old fd */
};

_Static_assert(sizeof(struct ioh_event) == 64, "events are 64 bytes");

/* A compact event: the next event of the same thread on the same descriptor,
 * file and call site, with the same aux, as the event record immediately
 * before it in its segment (full or compact; never anything else, never at
 * the start of a segment). It takes tid, fd, file, site and aux from that
 * event, and its start time is that event's plus dt. The writer uses it when
 * the fields fit; half the bytes per event is half of what tracing costs
 * beyond the clock (docs/shim.md, "What it costs"). */
struct ioh_event_short {           /* 32 bytes */
    uint16_t type;                 /* IOH_REC_EVENT_SHORT */
    uint16_t size8;                /* 4 */
    uint16_t op;                   /* enum ioh_op */
    uint16_t flags;                /* IOH_EV_* */
    uint32_t dt;                   /* t minus the previous event's t, ns */
    uint32_t dur;                  /* as in struct ioh_event */
    int64_t  off;
    uint32_t len;                  /* requested bytes, < 2^31 */
    int32_t  ret;                  /* result or -errno */
};

_Static_assert(sizeof(struct ioh_event_short) == 32, "compact events are 32 bytes");

/* A continuation event: a compact event that also has the op, flags and
 * requested length of the event record immediately before it (same rules as
 * struct ioh_event_short) and starts where that one ended: its offset is
 * that event's offset plus that event's result, which were both >= 0. A loop
 * reading a file in equal requests, the commonest pattern there is, costs 16
 * bytes per read. */
struct ioh_event_next {            /* 16 bytes */
    uint16_t type;                 /* IOH_REC_EVENT_NEXT */
    uint16_t size8;                /* 2 */
    int32_t  ret;                  /* result or -errno */
    uint32_t dt;                   /* t minus the previous event's t, ns */
    uint32_t dur;                  /* as in struct ioh_event */
};

_Static_assert(sizeof(struct ioh_event_next) == 16, "continuation events are 16 bytes");

/* Durations: nanoseconds below 2^31 (2.1 s); above, bit 31 set and the rest
 * in microseconds (up to 35 minutes, then saturated). */
static inline uint32_t ioh_dur_encode(uint64_t ns)
{
    if (ns < (1ull << 31))
        return (uint32_t)ns;
    uint64_t us = ns / 1000;
    return (1u << 31) | (uint32_t)(us < (1ull << 31) ? us : (1ull << 31) - 1);
}

static inline uint64_t ioh_dur_decode(uint32_t d)
{
    return d & (1u << 31) ? (uint64_t)(d & ~(1u << 31)) * 1000 : d;
}

/* File kinds in ioh_rec_path.kind. */
enum ioh_file_kind { IOH_FILE_OTHER = 0, IOH_FILE_REG, IOH_FILE_DIR, IOH_FILE_PIPE,
                     IOH_FILE_SOCK, IOH_FILE_CHR, IOH_FILE_BLK };

/* ioh_rec_path.flags */
#define IOH_PATH_ELIGIBLE  0x1u    /* regular, not O_DIRECT, not procfs/sysfs... */
#define IOH_PATH_INHERITED 0x2u    /* present before the shim saw it open */
#define IOH_PATH_STDIO     0x4u    /* opened through fopen/fdopen */

/* ioh_rec_path.ra_kb when the read-ahead of the file's device is not known:
 * not a regular file, a device no sysfs file names (tmpfs, btrfs, overlayfs),
 * or not learnt in this process (sysfs is read only at the program's own
 * opens, in a process of one thread: docs/trace-format.md). */
#define IOH_RA_UNKNOWN UINT32_MAX

/* A file id names one open file description of this process; one path record
 * announces it before the first event that uses it. */
struct ioh_rec_path {
    uint16_t type;                 /* IOH_REC_PATH */
    uint16_t size8;
    uint32_t file;                 /* file id, >= 1 */
    uint64_t t;
    uint64_t dev;
    uint64_t ino;
    int64_t  size;                 /* st_size when announced */
    uint32_t kind;                 /* enum ioh_file_kind */
    uint32_t flags;                /* IOH_PATH_* */
    uint32_t open_flags;           /* O_* as opened, if known */
    uint32_t path_len;             /* bytes of path that follow, no NUL */
    uint32_t ra_kb;                /* version 4: read_ahead_kb of the device behind the
                                      file when announced, or IOH_RA_UNKNOWN */
    uint32_t reserved;             /* 0 */
    /* char path[path_len], zero padded to 8 */
};

_Static_assert(sizeof(struct ioh_rec_path) == 64, "path records are 64 bytes and the path");
/* Versions 1-3: the same record without ra_kb and reserved (readers give
 * those records in the version 4 layout, ra_kb IOH_RA_UNKNOWN). */
#define IOH_REC_PATH_V3_SIZE 56u

/* One stack of a call site: frames from the caller of the wrapped function
 * outward. Each frame is struct ioh_site_frame followed by module_len bytes of
 * module path and symbol_len bytes of symbol name, zero padded to 8. */
struct ioh_rec_site {
    uint16_t type;                 /* IOH_REC_SITE */
    uint16_t size8;
    uint32_t site;                 /* call-site id, >= 1 */
    uint32_t nframes;
    uint32_t reserved;
};

struct ioh_site_frame {
    uint64_t pc;                   /* address in the process */
    uint64_t module_offset;        /* pc minus the module's load base */
    uint16_t module_len;
    uint16_t symbol_len;
    uint32_t symbol_offset;        /* pc minus the symbol's address, if known */
};

#endif
