/* synth_trace.h - writing native traces (shim/trace_format.h) directly, for
 * tests and benchmarks: synthetic read patterns with chosen times, pids and
 * call sites, so that reports on them are deterministic.
 *
 * The writer lays a trace out as the shim does (a 64 KiB header area, then
 * 64 KiB segments claimed per thread in order, records published by `used`)
 * but from one thread, with pwrite: no mapping, no atomics. It is fast enough
 * to write 100 million events in seconds (tests/bench/gen_trace.c).
 * Functions return 0 or -errno. Not thread-safe.
 */
#ifndef IOH_SYNTH_TRACE_H
#define IOH_SYNTH_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "trace_format.h"

struct ioh_synth;

struct ioh_synth_proc {
    int32_t pid, ppid;
    const char *exe;
    const char *const *argv;
    uint32_t argc;
    const char *host, *cwd;
    uint64_t start_mono, start_real;
};

struct ioh_synth *ioh_synth_create(const char *path, const struct ioh_synth_proc *p);

/* Announce file id `file` (an open file description). */
int ioh_synth_path(struct ioh_synth *w, uint32_t tid, uint32_t file, uint64_t t, uint64_t dev,
                   uint64_t ino, int64_t size, const char *path);
/* The same, opened with open_flags (O_*; ioh_synth_path: O_RDONLY). */
int ioh_synth_path_flags(struct ioh_synth *w, uint32_t tid, uint32_t file, uint64_t t,
                         uint64_t dev, uint64_t ino, int64_t size, const char *path,
                         uint32_t open_flags);
/* The read-ahead (read_ahead_kb) the next path records carry; default
 * IOH_RA_UNKNOWN, as the shim records it when it could not learn it. */
void ioh_synth_readahead(struct ioh_synth *w, uint32_t ra_kb);
/* Write a version 3 trace (path records without ra_kb), as iohint wrote
 * before version 4; call before anything is written. */
void ioh_synth_version3(struct ioh_synth *w);
/* A call site of nframes frames: module paths, offsets, symbols ("" none). */
int ioh_synth_site(struct ioh_synth *w, uint32_t tid, uint32_t site, uint32_t nframes,
                   const char *const *modules, const uint64_t *offsets,
                   const char *const *symbols);
/* Write every event in full (default: compact when the shim would, see
 * struct ioh_event_short). */
void ioh_synth_full_only(struct ioh_synth *w, bool on);
/* Any event; type and size are filled in. */
int ioh_synth_event(struct ioh_synth *w, const struct ioh_event *e);
/* A pread of len at off returning ret, taking dur ns. */
int ioh_synth_read(struct ioh_synth *w, uint32_t tid, uint64_t t, uint32_t file, int32_t fd,
                   int64_t off, uint64_t len, int64_t ret, uint32_t dur, uint32_t site);
/* close(fd) of file id `file`. */
int ioh_synth_close(struct ioh_synth *w, uint32_t tid, uint64_t t, uint32_t file, int32_t fd);

/* Write the last segments and the header; end_mono != 0 marks the trace
 * finished. Frees w. */
int ioh_synth_finish(struct ioh_synth *w, uint64_t end_mono);

#endif
