/* reader.h - reading native trace files (format: shim/trace_format.h).
 *
 * A trace is mapped read-only and walked segment by segment; the records of
 * all threads come out merged in time order (k-way merge over per-thread
 * cursors), so memory grows with threads and segments, not with events.
 * Every length and offset read from the file is checked before use: a
 * truncated file yields its records up to the last whole one (with a warning
 * through ioh_reader_warnings), and a file that is not a trace, or of another
 * format version, is an error naming the file. Not thread-safe per reader.
 */
#ifndef IOH_READER_H
#define IOH_READER_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

struct ioh_reader;

/* One record as it comes out of the merge. Exactly one pointer is set. Path
 * and site records stay valid until ioh_reader_close; an event stays valid
 * until the second following ioh_reader_next on the same reader (compact
 * events are expanded into a small ring of buffers per thread), so a caller
 * may hold one event back while it reads the next. */
struct ioh_record {
    int type;                            /* enum ioh_rec_type */
    const struct ioh_event *ev;
    const struct ioh_rec_path *path;
    const struct ioh_rec_site *site;
};

/* Open and validate. On failure returns NULL and writes a message naming the
 * file into err. */
struct ioh_reader *ioh_reader_open(const char *path, char *err, size_t errlen);
void ioh_reader_close(struct ioh_reader *r);

const struct ioh_trace_header *ioh_reader_header(const struct ioh_reader *r);
const char *ioh_reader_filename(const struct ioh_reader *r);
/* Header strings; "" when absent. argv is argc strings back to back. */
const char *ioh_reader_exe(const struct ioh_reader *r);
const char *ioh_reader_argv(const struct ioh_reader *r, uint32_t *argc);
const char *ioh_reader_host(const struct ioh_reader *r);
const char *ioh_reader_cwd(const struct ioh_reader *r);

/* Next record in time order: 1 and *rec filled, 0 at the end. */
int ioh_reader_next(struct ioh_reader *r, struct ioh_record *rec);

/* The latest path record seen for a file id, NULL if none (yet). */
const struct ioh_rec_path *ioh_reader_path(const struct ioh_reader *r, uint32_t file);
/* The site record for an id, NULL if none (yet). */
const struct ioh_rec_site *ioh_reader_site(const struct ioh_reader *r, uint32_t site);

/* Problems found while reading (damaged or cut segments); NULL if none. */
const char *ioh_reader_warnings(const struct ioh_reader *r);
/* Why a trace with these header flags (IOH_HDR_*) lacks events, in plain
 * words: the size bound, or a file that could not grow; NULL if it was not
 * truncated. Not a warning of the reader's: a bound is not damage. */
const char *ioh_trace_truncation(uint32_t flags);

/* Counts after the end: records returned and segments walked. */
uint64_t ioh_reader_events(const struct ioh_reader *r);
/* About how many bytes of the file were read so far (for progress). */
uint64_t ioh_reader_bytes_done(const struct ioh_reader *r);

/* Ops. */
const char *ioh_op_name(unsigned op);              /* "?" if unknown */
int ioh_op_class(unsigned op);                     /* enum ioh_op_class, -1 if unknown */

/* Walking a site record's frames. Returns the frame at *cursor and advances,
 * or NULL after the last one. module and symbol are not NUL-terminated. */
struct ioh_frame_view {
    const struct ioh_site_frame *frame;
    const char *module;
    const char *symbol;
};
int ioh_site_frame_at(const struct ioh_rec_site *s, uint32_t index, struct ioh_frame_view *out);

#endif
