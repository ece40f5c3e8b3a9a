/* multireader.h - many traces read as one stream of records in time order.
 *
 * The inputs are trace files and directories of them (the *.iohtrace files
 * directly inside; not recursive): a pipeline, a fork tree, a cluster job on
 * a shared file system. Each trace is opened with ioh_reader_open(); its
 * records (already merged across its threads) are merged across traces by a
 * k-way merge on time, so memory grows with the number of traces, never with
 * the number of events. Traces from one host share CLOCK_MONOTONIC and are
 * merged on it; when the traces come from several hosts, each trace's times
 * are shifted to wall-clock time (start_realtime_ns - start_mono_ns) first.
 * The same trace named twice (a directory and a file in it) is read once.
 *
 * Errors: opening fails, naming the file, when an input is missing, is not a
 * trace, or has another format version; a directory without traces is an
 * error too. A truncated or damaged trace opens and is read up to its last
 * whole record; its warnings come from ioh_reader_warnings(). Not thread-safe.
 */
#ifndef IOH_MULTIREADER_H
#define IOH_MULTIREADER_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

struct ioh_multireader;

/* Opens every input. Returns 0, or -1 with a message in err. */
int ioh_multireader_open(const char *const *inputs, size_t ninputs, struct ioh_multireader **out,
                         char *err, size_t errlen);
void ioh_multireader_close(struct ioh_multireader *mr);

/* Traces, in input order (directories sorted by name). */
size_t ioh_multireader_count(const struct ioh_multireader *mr);
const struct ioh_reader *ioh_multireader_reader(const struct ioh_multireader *mr, size_t i);
/* Total size of the trace files, for progress. */
uint64_t ioh_multireader_bytes(const struct ioh_multireader *mr);
/* Whether the traces came from several hosts (wall-clock merge). */
int ioh_multireader_multihost(const struct ioh_multireader *mr);
/* Processes the shim left untraced to keep IOHINT_TRACE_RESERVE free: the
 * *.untraced marks in the directories given (tracedir.h). */
size_t ioh_multireader_untraced(const struct ioh_multireader *mr);

/* The next record over all traces: 1 with *src (the trace's index) and *rec
 * set, 0 at the end. */
int ioh_multireader_next(struct ioh_multireader *mr, uint32_t *src, struct ioh_record *rec);

#endif
