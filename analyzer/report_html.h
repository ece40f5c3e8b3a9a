/* report_html.h - `iohint analyze --html FILE`: one self-contained HTML page
 * of a finished analysis (analysis.h).
 *
 * The page needs no network and no script: CSS inline, pictures as inline
 * SVG, system fonts. It holds the run (processes, totals), the list of files
 * with their class and recommendation, and per significant file: offset
 * against time coloured by the class of each phase (the picture of seed 001's
 * ATLAS plot), the request-size and seek-distance histograms, the phases, the
 * recommendation with its predicted effect, and the call sites. Layout and
 * reading guide: docs/html.md.
 *
 * Size is bounded whatever the trace: the analysis keeps a sample of points
 * per file, and the plot draws at most one mark per pixel and class.
 *
 * Errors: 0 or -errno (the file could not be written). Reads the analysis
 * only; not thread-safe with anything that modifies it. Every string from the
 * trace (paths, commands, symbols) is escaped.
 */
#ifndef IOH_REPORT_HTML_H
#define IOH_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"

/* Files drawn in detail at most (the list above them has every file). */
#define IOH_HTML_MAX_FILES 30

/* Writes the page to path ("-": stdout). Same declaration as in analysis.h. */
int ioh_report_html(const struct ioh_analysis *an, const char *path);

/* The same, to an open stream (not closed). */
int ioh_report_html_stream(const struct ioh_analysis *an, FILE *out);

/* Building blocks, exposed for the unit tests. */

/* Text for HTML: & < > " ' escaped; bytes below 0x20 other than tab and
 * newline become U+FFFD; invalid UTF-8 becomes U+FFFD. */
void ioh_html_escape(FILE *f, const char *s, size_t n);
/* A 1-2-5 step giving about `ticks` intervals over range (> 0). */
double ioh_html_nice_step(double range, int ticks);
/* Bytes with a binary unit: "512 B", "4 KiB", "1.5 MiB". Returns buf. */
char *ioh_html_bytes(char *buf, size_t len, double bytes);

#endif
