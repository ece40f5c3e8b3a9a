/* spec.h - what a policy says: parsing policy strings and policy files.
 *
 * A policy string (IOHINT_POLICY, `iohint run -p`) is `none`, `auto`, a
 * comma-separated list of actions, or the path of a policy file (anything
 * containing a '/' or ending in ".policy"). Actions, each at most once:
 *
 *   sequential | random | normal   the posix_fadvise hint to apply at open
 *   willneed                       WILLNEED the whole file at open (in the background)
 *   noreuse                        drop-behind: release pages behind the reader
 *   coalesce[=BLOCK]               serve small reads from a block cache
 *                                  (default 256K; 4K-64M)
 *   prefetch[=DISTANCE]            keep DISTANCE bytes ahead in the page cache
 *                                  (default 8M; 4K-1G)
 *   window[=SIZE]                  keep a SIZE window around the reader prefetched
 *                                  (default 32M; 4K-1G)
 *   keep-hints                     never override the program's own posix_fadvise
 *   auto                           decide per file from the online classifier
 *
 * A policy file holds one rule per line (`#` at the start of a line or after
 * a blank starts a comment):
 *
 *   default ACTIONS           for files no `path` rule matches (default: none)
 *   path GLOB ACTIONS         files whose absolute path (symlinks resolved)
 *                             matches GLOB (fnmatch, `*` also matches '/'); the
 *                             first match wins. GLOB starts with '/' or a
 *                             wildcard; "in double quotes" it may hold blanks
 *                             (\" and \\ for " and \)
 *   class CLASS ACTIONS       under `auto`, what to do once a file is classified
 *                             CLASS (sequential, reverse, strided, windowed,
 *                             sparse, re-read, small); a file with class rules
 *                             must say auto in its default or a path rule
 *
 * At most one default, one rule per class and one per glob.
 *
 * Parsing is pure (no I/O except reading the file in ioh_spec_load) and
 * reports errors as text naming the file, line and value. Not signal-safe;
 * called at initialisation and by the command line tool.
 */
#ifndef IOH_SPEC_H
#define IOH_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define IOH_ACT_HINT_MASK   0x0000000fu
#define IOH_ACT_SEQUENTIAL  0x00000001u
#define IOH_ACT_RANDOM      0x00000002u
#define IOH_ACT_NORMAL      0x00000003u
#define IOH_ACT_WILLNEED    0x00000010u
#define IOH_ACT_NOREUSE     0x00000020u
#define IOH_ACT_COALESCE    0x00000040u
#define IOH_ACT_PREFETCH    0x00000080u
#define IOH_ACT_WINDOW      0x00000100u
#define IOH_ACT_KEEP_HINTS  0x00000200u
#define IOH_ACT_AUTO        0x00000400u

/* A set of actions with their parameters. */
struct ioh_actions {
    uint32_t flags;                /* IOH_ACT_* */
    uint64_t coalesce_block;       /* bytes */
    uint64_t prefetch_distance;    /* bytes */
    uint64_t window_size;          /* bytes */
};

#define IOH_SPEC_MAX_RULES 64
#define IOH_SPEC_GLOB_MAX  512

enum ioh_rule_kind { IOH_RULE_PATH, IOH_RULE_CLASS };

/* Classes a `class` rule can name; the classifier's names plus "small". */
enum ioh_rule_class {
    IOH_RC_SEQUENTIAL, IOH_RC_REVERSE, IOH_RC_STRIDED, IOH_RC_WINDOWED,
    IOH_RC_SPARSE, IOH_RC_REREAD, IOH_RC_SMALL, IOH_RC_COUNT
};

struct ioh_rule {
    enum ioh_rule_kind kind;
    enum ioh_rule_class cls;       /* IOH_RULE_CLASS */
    char glob[IOH_SPEC_GLOB_MAX];  /* IOH_RULE_PATH */
    unsigned line;                 /* in the policy file, for messages */
    struct ioh_actions act;
};

struct ioh_spec {
    char source[256];              /* "IOHINT_POLICY" or the file's path */
    struct ioh_actions dflt;
    unsigned nrules;
    int class_rules;               /* any `class` rule present */
    struct ioh_rule rules[IOH_SPEC_MAX_RULES];   /* last: often never touched */
};

/* Parse an action list ("sequential,prefetch=8M"). On error returns -1 and
 * writes a message naming `where` and the bad value into err. */
int ioh_actions_parse(const char *text, struct ioh_actions *out, const char *where,
                      char *err, size_t errlen);

/* Does the policy string name a policy file (it contains a '/' or ends in
 * ".policy")? */
int ioh_spec_is_file(const char *policy);

/* Parse a policy string or load the policy file it names. */
int ioh_spec_parse(const char *policy, struct ioh_spec *out, char *err, size_t errlen);

/* Parse policy-file text (for tests; `name` appears in messages). */
int ioh_spec_parse_text(const char *text, const char *name, struct ioh_spec *out, char *err,
                        size_t errlen);

/* The actions for a file at open: the first matching path rule, else the
 * default. */
const struct ioh_actions *ioh_spec_for_path(const struct ioh_spec *s, const char *path);

/* The actions a `class` rule gives for cls, or NULL. */
const struct ioh_actions *ioh_spec_for_class(const struct ioh_spec *s, enum ioh_rule_class cls);

/* Text form of actions, e.g. "sequential,coalesce=262144" ("none" if empty). */
void ioh_actions_format(const struct ioh_actions *a, char *buf, size_t len);

/* Is the spec "do nothing" (none everywhere, no rules)? */
int ioh_spec_is_none(const struct ioh_spec *s);

#endif
