/* tracedir.h - the traces of a directory, as analyze, dump and export take
 * them. */
#ifndef IOH_TRACEDIR_H
#define IOH_TRACEDIR_H

#include <stddef.h>

/* The *.iohtrace files of dir, sorted by name, as "dir/name" strings in
 * *names (*n of them; ioh_trace_dir_free frees them). An empty file - its
 * process was killed between creating the trace and writing its header -
 * is left out with one warning on stderr, prefixed by `who` ("iohint
 * analyze"): one such process must not keep the others' traces from being
 * read. *untraced (if not NULL) counts the *.untraced marks: processes the
 * shim left untraced to keep IOHINT_TRACE_RESERVE free (shim/trace.c,
 * docs/trace-format.md). Returns 0, or -errno with err set: dir cannot be
 * read, or holds no trace that is not empty. */
int ioh_trace_dir_list(const char *dir, const char *who, char ***names, size_t *n,
                       size_t *untraced, char *err, size_t errlen);
void ioh_trace_dir_free(char **names, size_t n);

#endif
