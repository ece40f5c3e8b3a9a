/* spec.c - parsing policy strings and files; see spec.h. */
#include "spec.h"

#include "parse.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_COALESCE_BLOCK   (256u * 1024)
#define DEFAULT_PREFETCH         (8u * 1024 * 1024)
#define DEFAULT_WINDOW           (32u * 1024 * 1024)

/* The ranges of the sized actions. A coalescing block is allocated per file
 * and filled with one pread: 4K (a page) to 64M.
 *
 * The look-ahead distance (engine.c, lookahead() and strides()) is how far
 * ahead of the reader the page cache is kept filled, and the window
 * (window()) how much around the reader is kept, with up to 8 windows more
 * ahead for a file that fits in a quarter of RAM. Both are at least a page:
 * the page cache holds whole pages, so a smaller distance or window asks for
 * nothing more than the read itself (prefetch=1 was accepted and queued a
 * request of a few bytes at every read). Both are at most 1 GiB: more is no
 * longer a look-ahead but a request to cache the file (which `willneed`
 * says directly), and on a machine with little memory it evicts the pages
 * the reader is about to use (window=100G asked for 900 GiB ahead). A fixed
 * bound, not a fraction of RAM: parsing stays pure and a policy file is
 * valid or not whatever the machine it is checked on. */
#define COALESCE_MIN             4096u
#define COALESCE_MAX             (64u << 20)
#define AHEAD_MIN                4096u
#define AHEAD_MAX                (1u << 30)

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* isspace of the C locale, the one in force when the shim parses its policy
 * (before main): isspace's table is one more page of libc to fault in at
 * every start. */
static int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* What snprintf(dst, size, "%s%s%s", a, b, c) writes, without printf: the
 * first vsnprintf of a process faults in pages of libc's printf code
 * (measured: several microseconds), and a policy string is parsed at every
 * start, where only an error needs formatting. */
static void concat3(char *dst, size_t size, const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    size_t at = 0;
    for (size_t i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && at + 1 < size; p++)
            dst[at++] = *p;
    dst[at] = '\0';
}

/* Sizes like 4096, 64K, 8M, 1G (parse.h), from 1 byte to 1 TiB. */
static int parse_size(const char *s, uint64_t *out)
{
    int64_t v;
    if (ioh_parse_size(s, &v) < 0 || v <= 0 || v > (1ll << 40))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static const struct {
    const char *name;
    uint32_t flag;
    int takes_size;               /* 0 no, 1 optional */
} g_words[] = {
    {"sequential", IOH_ACT_SEQUENTIAL, 0},
    {"random", IOH_ACT_RANDOM, 0},
    {"normal", IOH_ACT_NORMAL, 0},
    {"willneed", IOH_ACT_WILLNEED, 0},
    {"noreuse", IOH_ACT_NOREUSE, 0},
    {"coalesce", IOH_ACT_COALESCE, 1},
    {"prefetch", IOH_ACT_PREFETCH, 1},
    {"window", IOH_ACT_WINDOW, 1},
    {"keep-hints", IOH_ACT_KEEP_HINTS, 0},
    {"auto", IOH_ACT_AUTO, 0},
};
_Static_assert(sizeof g_words / sizeof g_words[0] <= 32, "ioh_actions_parse's `seen` is 32 bits");

int ioh_actions_parse(const char *text, struct ioh_actions *out, const char *where, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->coalesce_block = DEFAULT_COALESCE_BLOCK;
    out->prefetch_distance = DEFAULT_PREFETCH;
    out->window_size = DEFAULT_WINDOW;
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return fail(err, errlen, "%s: policy too long", where);
    strcpy(buf, text);
    if (!strcmp(buf, "none") || !buf[0])
        return buf[0] ? 0 : fail(err, errlen, "%s: empty policy", where);
    const char *c = buf;          /* blanks alone: no action at all (a tester's -p ' ') */
    while (is_space((unsigned char)*c))
        c++;
    if (!*c)
        return fail(err, errlen, "%s: empty policy", where);
    uint32_t seen = 0;            /* bit i: g_words[i] given */
    /* Split by hand: strtok_r would skip empty items, and "sequential,"
     * (a cut-off list) would pass for "sequential". */
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        while (is_space((unsigned char)*tok))
            tok++;
        size_t n = strlen(tok);
        while (n && is_space((unsigned char)tok[n - 1]))
            tok[--n] = '\0';
        if (!n)
            return fail(err, errlen, "%s: empty action (a comma at either end, or two in a row)",
                        where);
        char *eq = strchr(tok, '=');
        if (eq)
            *eq++ = '\0';
        size_t i;
        for (i = 0; i < sizeof g_words / sizeof g_words[0]; i++)
            if (!strcmp(tok, g_words[i].name))
                break;
        if (i == sizeof g_words / sizeof g_words[0]) {
            if (!strcmp(tok, "none"))
                return fail(err, errlen, "%s: 'none' cannot be combined with other actions",
                            where);
            return fail(err, errlen,
                        "%s: unknown action '%s' (known: sequential, random, normal, willneed, "
                        "noreuse, coalesce[=SIZE], prefetch[=SIZE], window[=SIZE], keep-hints, "
                        "auto, none)", where, tok);
        }
        uint32_t flag = g_words[i].flag;
        /* Each action at most once, as each rule kind per file line: a
         * repeat is a mistake (an edit that left the old value behind), and
         * which of `coalesce=4K,coalesce=8K` should win is a guess. */
        if (seen & (1u << i))
            return fail(err, errlen, "%s: '%s' given twice (each action at most once)", where,
                        tok);
        seen |= 1u << i;
        if (flag & IOH_ACT_HINT_MASK) {
            if ((out->flags & IOH_ACT_HINT_MASK) && (out->flags & IOH_ACT_HINT_MASK) != flag)
                return fail(err, errlen, "%s: '%s' contradicts an earlier hint", where, tok);
        }
        if (eq) {
            uint64_t v;
            if (!g_words[i].takes_size)
                return fail(err, errlen, "%s: '%s' takes no value (got '%s')", where, tok, eq);
            if (parse_size(eq, &v) < 0)
                return fail(err, errlen, "%s: bad size '%s' for %s (e.g. 64K, 8M, 1G)", where,
                            eq, tok);
            if (flag == IOH_ACT_COALESCE) {
                if (v < COALESCE_MIN || v > COALESCE_MAX)
                    return fail(err, errlen, "%s: coalesce block %s out of range (4K-64M)",
                                where, eq);
                out->coalesce_block = v;
            } else if (flag == IOH_ACT_PREFETCH) {
                if (v < AHEAD_MIN || v > AHEAD_MAX)
                    return fail(err, errlen, "%s: prefetch distance %s out of range (4K-1G)",
                                where, eq);
                out->prefetch_distance = v;
            } else {
                if (v < AHEAD_MIN || v > AHEAD_MAX)
                    return fail(err, errlen, "%s: window size %s out of range (4K-1G)", where,
                                eq);
                out->window_size = v;
            }
        }
        out->flags |= flag;
    }
    return 0;
}

static const char *const g_class_names[IOH_RC_COUNT] = {
    "sequential", "reverse", "strided", "windowed", "sparse", "re-read", "small",
};

int ioh_spec_is_file(const char *policy)
{
    size_t n = strlen(policy);
    return strchr(policy, '/') || (n > 7 && !strcmp(policy + n - 7, ".policy"));
}

static char *skip_space(char *s)
{
    while (is_space((unsigned char)*s))
        s++;
    return s;
}

/* The end of the word at s: the next blank or the end of the line. */
static char *word_end(char *s)
{
    while (*s && !is_space((unsigned char)*s))
        s++;
    return s;
}

/* Cut the comment off s: it starts at a '#' at the start of s or after a
 * blank, so that a glob may hold one (/data/#1/x). s starts the line or
 * follows a blank. Returns s, trimmed. */
static char *cut_comment(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == '#' && (p == s || is_space((unsigned char)p[-1]))) {
            *p = '\0';
            break;
        }
    size_t n = strlen(s);
    while (n && is_space((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return skip_space(s);
}

/* The closing quote of a glob in double quotes at s (s[0] == '"'), or NULL.
 * The glob is read as the shell reads double quotes: \" and \\ stand for "
 * and \, any other backslash stays (fnmatch's own escape: "\*" matches a
 * '*'). */
static char *closing_quote(char *s)
{
    char *r = s + 1;
    for (; *r && *r != '"'; r++)
        if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
            r++;
    return *r ? r : NULL;
}

/* Unquote the glob from s to its closing quote q, in place from s on. */
static void unquote(char *s, char *q)
{
    char *w = s;
    for (char *r = s + 1; r < q; r++) {
        if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
            r++;
        *w++ = *r;
    }
    *w = '\0';
}

/* Can a glob match an absolute path? Only if it starts with '/' or with a
 * wildcard that matches one (fnmatch without FNM_PATHNAME). */
static int glob_is_absolute(const char *g)
{
    return g[0] == '/' || g[0] == '*' || g[0] == '?' || g[0] == '[';
}

/* The rule's glob or class argument from s (after the keyword), into *arg;
 * returns where the actions start, or NULL after writing an error. */
static char *rule_argument(char *s, const char *kw, const char *where, char **arg, char *err,
                           size_t errlen)
{
    s = skip_space(s);
    *arg = s;
    if (*s == '#') {               /* a comment: no argument */
        *s = '\0';
        return s;
    }
    if (kw[0] == 'p' && *s == '"') {
        char *q = closing_quote(s);
        if (!q) {
            fail(err, errlen, "%s: no closing quote in glob %s", where, s);
            return NULL;
        }
        if (q[1] && !is_space((unsigned char)q[1])) {
            fail(err, errlen, "%s: text right after the closing quote of glob %.*s", where,
                 (int)(q + 1 - s), s);
            return NULL;
        }
        if (q == s + 1) {
            fail(err, errlen, "%s: empty glob \"\"", where);
            return NULL;
        }
        unquote(s, q);
        return q + 1;
    }
    char *end = word_end(s);
    if (*end)
        *end++ = '\0';
    return end;
}

/* Checks of a whole file, once its rules are read: a `class` rule acts only
 * under auto, so a file with class rules must say auto somewhere. */
static int check_file(const struct ioh_spec *s, const char *name, char *err, size_t errlen)
{
    if (!s->class_rules || (s->dflt.flags & IOH_ACT_AUTO))
        return 0;
    unsigned first_class = 0;
    for (unsigned i = 0; i < s->nrules; i++) {
        if (s->rules[i].kind == IOH_RULE_PATH && (s->rules[i].act.flags & IOH_ACT_AUTO))
            return 0;
        if (s->rules[i].kind == IOH_RULE_CLASS && !first_class)
            first_class = s->rules[i].line;
    }
    return fail(err, errlen,
                "%s line %u: 'class' rules act only under auto, and no default or path rule "
                "says auto (classes come from auto's online classifier)", name, first_class);
}

int ioh_spec_parse_text(const char *text, const char *name, struct ioh_spec *out, char *err,
                        size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "%s", name);
    char where[320];
    snprintf(where, sizeof where, "%s", name);
    ioh_actions_parse("none", &out->dflt, where, err, errlen);
    unsigned default_line = 0;
    unsigned lineno = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[2048];
        lineno++;
        if (len >= sizeof line)
            return fail(err, errlen, "%s line %u: line too long", name, lineno);
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (nl ? 1 : 0);
        char *s = skip_space(line);
        if (!*s || *s == '#')
            continue;
        snprintf(where, sizeof where, "%s line %u", name, lineno);
        char *kw = s;
        s = word_end(s);
        if (*s)
            *s++ = '\0';
        if (!strcmp(kw, "default")) {
            s = cut_comment(s);
            if (default_line)
                return fail(err, errlen, "%s: second 'default' rule (line %u has one)", where,
                            default_line);
            if (!*s)
                return fail(err, errlen, "%s: 'default' needs actions", where);
            if (ioh_actions_parse(s, &out->dflt, where, err, errlen) < 0)
                return -1;
            default_line = lineno;
            continue;
        }
        if (strcmp(kw, "path") && strcmp(kw, "class"))
            return fail(err, errlen, "%s: unknown rule '%s' (expected default, path or class)",
                        where, kw);
        char *arg;
        s = rule_argument(s, kw, where, &arg, err, errlen);
        if (!s)
            return -1;
        s = cut_comment(s);
        if (!*arg || !*s)
            return fail(err, errlen, "%s: '%s' needs a %s and actions", where, kw,
                        kw[0] == 'p' ? "glob" : "class");
        if (out->nrules == IOH_SPEC_MAX_RULES)
            return fail(err, errlen, "%s: more than %d rules", where, IOH_SPEC_MAX_RULES);
        struct ioh_rule *r = &out->rules[out->nrules];
        r->line = lineno;
        if (kw[0] == 'p') {
            r->kind = IOH_RULE_PATH;
            if (strlen(arg) >= sizeof r->glob)
                return fail(err, errlen, "%s: glob too long", where);
            /* Paths are absolute (read back through /proc/self/fd): a
             * relative glob never matches, silently. */
            if (!glob_is_absolute(arg))
                return fail(err, errlen,
                            "%s: relative glob '%s' never matches (globs match the file's "
                            "absolute path: start it with / or *)", where, arg);
            for (unsigned i = 0; i < out->nrules; i++)
                if (out->rules[i].kind == IOH_RULE_PATH && !strcmp(out->rules[i].glob, arg))
                    return fail(err, errlen,
                                "%s: a second rule for glob '%s' (line %u has one, and the "
                                "first match wins)", where, arg, out->rules[i].line);
            strcpy(r->glob, arg);
        } else {
            r->kind = IOH_RULE_CLASS;
            int c;
            for (c = 0; c < IOH_RC_COUNT; c++)
                if (!strcmp(arg, g_class_names[c]))
                    break;
            if (c == IOH_RC_COUNT)
                return fail(err, errlen,
                            "%s: unknown class '%s' (sequential, reverse, strided, windowed, "
                            "sparse, re-read, small)", where, arg);
            r->cls = (enum ioh_rule_class)c;
            for (unsigned i = 0; i < out->nrules; i++)
                if (out->rules[i].kind == IOH_RULE_CLASS && out->rules[i].cls == r->cls)
                    return fail(err, errlen,
                                "%s: a second rule for class '%s' (line %u has one)", where,
                                arg, out->rules[i].line);
            out->class_rules = 1;
        }
        if (ioh_actions_parse(s, &r->act, where, err, errlen) < 0)
            return -1;
        out->nrules++;
    }
    return check_file(out, name, err, errlen);
}

int ioh_spec_parse(const char *policy, struct ioh_spec *out, char *err, size_t errlen)
{
    if (!ioh_spec_is_file(policy)) {
        /* No rules: leave the rule table (tens of KiB) untouched, unfaulted. */
        memset(out->source, 0, sizeof out->source);
        memset(&out->dflt, 0, sizeof out->dflt);
        out->nrules = 0;
        out->class_rules = 0;
        concat3(out->source, sizeof out->source, "policy", "", "");
        char where[300];
        concat3(where, sizeof where, "policy '", policy, "'");
        return ioh_actions_parse(policy, &out->dflt, where, err, errlen);
    }
    FILE *f = fopen(policy, "re");
    if (!f)
        return fail(err, errlen, "policy file %s: %s", policy, strerror(errno));
    char *text = NULL;
    size_t cap = 0, n = 0;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + got + 1 > cap) {
            cap = (n + got + 1) * 2;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return fail(err, errlen, "policy file %s: out of memory", policy);
            }
            text = t;
        }
        memcpy(text + n, chunk, got);
        n += got;
        if (n > (1u << 20)) {
            free(text);
            fclose(f);
            return fail(err, errlen, "policy file %s: larger than 1 MiB", policy);
        }
    }
    if (ferror(f)) {              /* a directory, an I/O error: not an empty policy */
        int e = errno;
        free(text);
        fclose(f);
        return fail(err, errlen, "policy file %s: %s", policy, strerror(e));
    }
    fclose(f);
    if (!text)
        text = calloc(1, 1);
    else
        text[n] = '\0';
    if (memchr(text, '\0', n))
        return free(text), fail(err, errlen, "policy file %s: not a text file", policy);
    int r = ioh_spec_parse_text(text, policy, out, err, errlen);
    free(text);
    return r;
}

const struct ioh_actions *ioh_spec_for_path(const struct ioh_spec *s, const char *path)
{
    for (unsigned i = 0; i < s->nrules; i++)
        if (s->rules[i].kind == IOH_RULE_PATH && fnmatch(s->rules[i].glob, path, 0) == 0)
            return &s->rules[i].act;
    return &s->dflt;
}

const struct ioh_actions *ioh_spec_for_class(const struct ioh_spec *s, enum ioh_rule_class cls)
{
    for (unsigned i = 0; i < s->nrules; i++)
        if (s->rules[i].kind == IOH_RULE_CLASS && s->rules[i].cls == cls)
            return &s->rules[i].act;
    return NULL;
}

void ioh_actions_format(const struct ioh_actions *a, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof g_words / sizeof g_words[0]; i++) {
        uint32_t f = g_words[i].flag;
        int on = f & IOH_ACT_HINT_MASK ? (a->flags & IOH_ACT_HINT_MASK) == f : (a->flags & f) != 0;
        if (!on)
            continue;
        uint64_t v = f == IOH_ACT_COALESCE ? a->coalesce_block
                   : f == IOH_ACT_PREFETCH ? a->prefetch_distance
                   : f == IOH_ACT_WINDOW ? a->window_size : 0;
        /* A size as it would be typed ("coalesce=512K"), not in bytes. */
        char size[32] = "";
        if (v)
            ioh_format_size(v, size, sizeof size);
        int n = snprintf(buf + at, len - at, "%s%s%s%s", at ? "," : "", g_words[i].name,
                         v ? "=" : "", size);
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
    }
    if (!at)
        snprintf(buf, len, "none");
}

int ioh_spec_is_none(const struct ioh_spec *s)
{
    return s->dflt.flags == 0 && s->nrules == 0;
}
