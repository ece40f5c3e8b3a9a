/* Unit tests for policies/spec.c: policy strings and policy files.
 *
 * Every action with and without its size, the size syntax and its limits,
 * the errors (each must name where - the policy string, or the file and line -
 * and the offending value), path globs (first match wins, `*` crosses '/'),
 * class rules, comments and quoted globs, what a file may not repeat, and the
 * text form round-tripping through the parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "spec.h"

#define K 1024ull
#define M (1024ull * 1024)

static char g_err[512];

/* Parse an action list that must be accepted. */
static struct ioh_actions ok(const char *text)
{
    struct ioh_actions a;
    g_err[0] = '\0';
    int r = ioh_actions_parse(text, &a, "policy", g_err, sizeof g_err);
    if (r != 0)
        fail_msg("'%s' rejected: %s", text, g_err);
    return a;
}

/* Parse an action list that must be rejected with a message containing every
 * one of the NULL-terminated fragments. */
static void text_bad(const char *text, unsigned line, const char *want);

static void bad(const char *text, ...)
{
    struct ioh_actions a;
    g_err[0] = '\0';
    int r = ioh_actions_parse(text, &a, "policy 'X'", g_err, sizeof g_err);
    if (r != -1)
        fail_msg("'%s' accepted (flags %#x)", text, a.flags);
    va_list ap;
    va_start(ap, text);
    for (const char *want; (want = va_arg(ap, const char *));)
        if (!strstr(g_err, want))
            fail_msg("'%s': message \"%s\" lacks \"%s\"", text, g_err, want);
    va_end(ap);
    if (strncmp(g_err, "policy 'X'", 10) != 0)
        fail_msg("'%s': message \"%s\" does not start with where it came from", text, g_err);
}

static void every_action(void **state)
{
    (void)state;
    struct ioh_actions a = ok("sequential");
    assert_int_equal(a.flags, IOH_ACT_SEQUENTIAL);
    assert_int_equal(ok("random").flags, IOH_ACT_RANDOM);
    assert_int_equal(ok("normal").flags, IOH_ACT_NORMAL);
    assert_int_equal(ok("willneed").flags, IOH_ACT_WILLNEED);
    assert_int_equal(ok("noreuse").flags, IOH_ACT_NOREUSE);
    assert_int_equal(ok("keep-hints").flags, IOH_ACT_KEEP_HINTS);
    assert_int_equal(ok("auto").flags, IOH_ACT_AUTO);
    assert_int_equal(ok("none").flags, 0);
    /* Defaults of the sized actions. */
    a = ok("coalesce");
    assert_int_equal(a.flags, IOH_ACT_COALESCE);
    assert_int_equal(a.coalesce_block, 256 * K);
    a = ok("prefetch");
    assert_int_equal(a.flags, IOH_ACT_PREFETCH);
    assert_int_equal(a.prefetch_distance, 8 * M);
    a = ok("window");
    assert_int_equal(a.flags, IOH_ACT_WINDOW);
    assert_int_equal(a.window_size, 32 * M);
    /* With sizes. */
    a = ok("coalesce=4K,prefetch=16M,window=1G");
    assert_int_equal(a.flags, IOH_ACT_COALESCE | IOH_ACT_PREFETCH | IOH_ACT_WINDOW);
    assert_int_equal(a.coalesce_block, 4 * K);
    assert_int_equal(a.prefetch_distance, 16 * M);
    assert_int_equal(a.window_size, 1024 * M);
    /* A combination, with blanks around the words. */
    a = ok(" sequential , coalesce=64K ,prefetch , noreuse,willneed,keep-hints,auto ");
    assert_int_equal(a.flags, IOH_ACT_SEQUENTIAL | IOH_ACT_COALESCE | IOH_ACT_PREFETCH |
                                  IOH_ACT_NOREUSE | IOH_ACT_WILLNEED | IOH_ACT_KEEP_HINTS |
                                  IOH_ACT_AUTO);
    assert_int_equal(a.coalesce_block, 64 * K);
    /* The issue's own example. */
    a = ok("sequential,prefetch=8M");
    assert_int_equal(a.flags, IOH_ACT_SEQUENTIAL | IOH_ACT_PREFETCH);
    assert_int_equal(a.prefetch_distance, 8 * M);
}

static void sizes(void **state)
{
    (void)state;
    assert_int_equal(ok("coalesce=4096").coalesce_block, 4096);
    assert_int_equal(ok("coalesce=64k").coalesce_block, 64 * K);
    assert_int_equal(ok("coalesce=64KiB").coalesce_block, 64 * K);
    assert_int_equal(ok("coalesce=64KB").coalesce_block, 64 * K);
    assert_int_equal(ok("coalesce=1m").coalesce_block, M);
    assert_int_equal(ok("coalesce=64M").coalesce_block, 64 * M);
    assert_int_equal(ok("prefetch=4K").prefetch_distance, 4 * K);
    assert_int_equal(ok("prefetch=1G").prefetch_distance, 1024 * M);
    assert_int_equal(ok("window=4096").window_size, 4 * K);
    assert_int_equal(ok("window=1G").window_size, 1024 * M);
    /* Malformed sizes: the message names the value and the action. */
    bad("coalesce=", "bad size ''", "coalesce", NULL);
    bad("coalesce=abc", "bad size 'abc'", NULL);
    bad("coalesce=0", "bad size '0'", NULL);
    bad("prefetch=-1", "bad size '-1'", "prefetch", NULL);
    bad("prefetch=-1K", "bad size '-1K'", NULL);
    bad("window=4X", "bad size '4X'", "window", NULL);
    bad("window=4KK", "bad size '4KK'", NULL);
    bad("window=2T", "bad size '2T'", NULL);          /* sizes stop at 1 TiB */
    bad("window=1025G", "bad size '1025G'", NULL);
    bad("prefetch=99999999999999999999999", "bad size '99999999999999999999999'", NULL);
    bad("prefetch=1.5M", "bad size '1.5M'", NULL);
    bad("prefetch=8M junk", "bad size '8M junk'", NULL);
    /* The coalescing block is bounded. */
    bad("coalesce=2K", "coalesce block 2K out of range", NULL);
    bad("coalesce=4095", "4095 out of range", NULL);
    bad("coalesce=65M", "65M out of range", NULL);
    /* So are the look-ahead distance and the window: a page to 1 GiB (both
     * took anything from 1 byte to 1 TiB). */
    bad("prefetch=1", "prefetch distance 1 out of range (4K-1G)", NULL);
    bad("prefetch=4095", "prefetch distance 4095 out of range", NULL);
    bad("prefetch=1025M", "prefetch distance 1025M out of range", NULL);
    bad("prefetch=1T", "prefetch distance 1T out of range", NULL);
    bad("prefetch=2G", "prefetch distance 2G out of range", NULL);
    bad("window=1", "window size 1 out of range (4K-1G)", NULL);
    bad("window=100G", "window size 100G out of range", NULL);
    bad("window=1024G", "window size 1024G out of range", NULL);
    bad("sequential,window=1G,prefetch=1", "prefetch distance 1 out of range", NULL);
    /* Words without a size take none. */
    bad("sequential=1", "'sequential' takes no value (got '1')", NULL);
    bad("keep-hints=yes", "'keep-hints' takes no value (got 'yes')", NULL);
    bad("auto=1M", "'auto' takes no value", NULL);
}

static void action_errors(void **state)
{
    (void)state;
    bad("sequentail", "unknown action 'sequentail'", "known:", NULL);
    bad("coalesce,Sequential", "unknown action 'Sequential'", NULL);
}

static void empty_words_and_none(void **state)
{
    (void)state;
    bad("", "empty policy", NULL);
    bad(" ", "empty policy", NULL);
    bad(" \t ", "empty policy", NULL);
    bad("none,coalesce", "'none' cannot be combined", NULL);
    bad("coalesce,none", "'none' cannot be combined", NULL);
    char longtext[1100];
    memset(longtext, 'a', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    bad(longtext, "too long", NULL);
}

/* A comma with nothing on one side is a mistake (a list cut short, a word
 * deleted), not "nothing": rejected, naming where (the policy string or the
 * file's line). They were accepted silently: -p 'sequential,' ran as
 * sequential. */
static void stray_commas(void **state)
{
    (void)state;
    bad("sequential,", "empty action", NULL);
    bad(",sequential", "empty action", NULL);
    bad("sequential,,random", "empty action", NULL);
    bad("sequential, ,coalesce", "empty action", NULL);
    bad(",", "empty action", NULL);
    bad("coalesce=1M,", "empty action", NULL);
    /* Spaces around the commas are fine. */
    assert_int_equal(ok("sequential , willneed").flags, IOH_ACT_SEQUENTIAL | IOH_ACT_WILLNEED);
    struct ioh_spec sp;
    assert_int_equal(ioh_spec_parse("sequential,", &sp, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "policy 'sequential,'"));
    text_bad("default sequential,\n", 1, "empty action");
    text_bad("# c\npath /data/* ,willneed\n", 2, "empty action");
}

/* Each action at most once: a repeat was taken silently (the last size won,
 * `coalesce=4K,coalesce=8K` ran with 8K) while `sequential,random` and two
 * `default` lines were errors. */
static void repeated_actions(void **state)
{
    (void)state;
    bad("coalesce=4K,coalesce=8K", "'coalesce' given twice", NULL);
    bad("coalesce,coalesce=8K", "'coalesce' given twice", NULL);
    bad("prefetch=8M, prefetch", "'prefetch' given twice", NULL);
    bad("window=8M,sequential,window=16M", "'window' given twice", NULL);
    bad("random,random", "'random' given twice", NULL);
    bad("auto,noreuse,auto", "'auto' given twice", NULL);
    bad("keep-hints,keep-hints", "'keep-hints' given twice", NULL);
    text_bad("# c\npath /x/* willneed,willneed\n", 2, "'willneed' given twice");
}

static void contradicting_hints(void **state)
{
    (void)state;
    bad("sequential,random", "'random' contradicts", NULL);
    bad("random,sequential", "'sequential' contradicts", NULL);
    bad("normal,coalesce,sequential", "'sequential' contradicts", NULL);
    bad("sequential,normal", "'normal' contradicts", NULL);
    /* Hints combine with everything else. */
    assert_int_equal(ok("random,willneed").flags, IOH_ACT_RANDOM | IOH_ACT_WILLNEED);
}

/* ------------------------------------------------------------------ */
/* Policy strings vs files                                              */

static void policy_strings(void **state)
{
    (void)state;
    struct ioh_spec s;
    assert_int_equal(ioh_spec_parse("none", &s, g_err, sizeof g_err), 0);
    assert_true(ioh_spec_is_none(&s));
    assert_int_equal(ioh_spec_parse("auto", &s, g_err, sizeof g_err), 0);
    assert_false(ioh_spec_is_none(&s));
    assert_int_equal(s.dflt.flags, IOH_ACT_AUTO);
    assert_int_equal(s.nrules, 0);
    assert_ptr_equal(ioh_spec_for_path(&s, "/any/file"), &s.dflt);
    assert_null(ioh_spec_for_class(&s, IOH_RC_SEQUENTIAL));
    assert_int_equal(ioh_spec_parse("sequential,coalesce=4K", &s, g_err, sizeof g_err), 0);
    assert_int_equal(s.dflt.coalesce_block, 4096);
    /* A bad policy string: the message quotes the whole string and the word. */
    assert_int_equal(ioh_spec_parse("sequential,bogus", &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "policy 'sequential,bogus'"));
    assert_non_null(strstr(g_err, "unknown action 'bogus'"));
    /* Anything with a '/' or ending in .policy is a file. */
    assert_int_equal(ioh_spec_parse("/nonexistent/dir/p", &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "policy file /nonexistent/dir/p"));
    assert_non_null(strstr(g_err, "No such file"));
    assert_int_equal(ioh_spec_parse("missing.policy", &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "policy file missing.policy"));
    /* ".policy" alone is not a name with that suffix: an unknown action. */
    assert_int_equal(ioh_spec_parse(".policy", &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "unknown action '.policy'"));
}

static struct ioh_spec g_spec;

static int text_ok(const char *text)
{
    g_err[0] = '\0';
    int r = ioh_spec_parse_text(text, "t.policy", &g_spec, g_err, sizeof g_err);
    if (r != 0)
        fail_msg("policy text rejected: %s\n%s", g_err, text);
    return r;
}

/* The text must be rejected with a message starting "t.policy line N:" and
 * containing want. */
static void text_bad(const char *text, unsigned line, const char *want)
{
    g_err[0] = '\0';
    int r = ioh_spec_parse_text(text, "t.policy", &g_spec, g_err, sizeof g_err);
    if (r != -1)
        fail_msg("policy text accepted:\n%s", text);
    char where[64];
    snprintf(where, sizeof where, "t.policy line %u: ", line);
    if (strncmp(g_err, where, strlen(where)) != 0)
        fail_msg("message \"%s\" does not start with \"%s\"", g_err, where);
    if (!strstr(g_err, want))
        fail_msg("message \"%s\" lacks \"%s\"", g_err, want);
}

static void file_rules(void **state)
{
    (void)state;
    text_ok("# a comment\n"
            "\n"
            "   default   auto   # trailing comment\n"
            "path /data/*.bai none\n"
            "path /data/*.bam sequential,prefetch=16M\n"
            "path /data/* random\n"
            "path *.txt coalesce=1M\n"
            "class sequential sequential,noreuse\n"
            "class small coalesce=1M\n"
            "class re-read keep-hints\r\n");
    assert_string_equal(g_spec.source, "t.policy");
    assert_int_equal(g_spec.dflt.flags, IOH_ACT_AUTO);
    assert_int_equal(g_spec.nrules, 7);
    assert_true(g_spec.class_rules);
    assert_false(ioh_spec_is_none(&g_spec));
    /* Globs: first match wins; `*` matches '/' too (fnmatch without
     * FNM_PATHNAME). */
    const struct ioh_actions *a = ioh_spec_for_path(&g_spec, "/data/x.bai");
    assert_int_equal(a->flags, 0);                         /* `none` rule, not the default */
    assert_ptr_not_equal(a, &g_spec.dflt);
    a = ioh_spec_for_path(&g_spec, "/data/x.bam");
    assert_int_equal(a->flags, IOH_ACT_SEQUENTIAL | IOH_ACT_PREFETCH);
    assert_int_equal(a->prefetch_distance, 16 * M);
    a = ioh_spec_for_path(&g_spec, "/data/sub/dir/y.bam");  /* `*` crossed two slashes */
    assert_int_equal(a->flags, IOH_ACT_SEQUENTIAL | IOH_ACT_PREFETCH);
    a = ioh_spec_for_path(&g_spec, "/data/notes.txt");    /* the /data rule comes first */
    assert_int_equal(a->flags, IOH_ACT_RANDOM);
    a = ioh_spec_for_path(&g_spec, "/home/notes.txt");
    assert_int_equal(a->flags, IOH_ACT_COALESCE);
    assert_int_equal(a->coalesce_block, M);
    a = ioh_spec_for_path(&g_spec, "/home/notes.md");
    assert_ptr_equal(a, &g_spec.dflt);
    a = ioh_spec_for_path(&g_spec, "");
    assert_ptr_equal(a, &g_spec.dflt);
    /* Class rules: the rule for a class; NULL when none. */
    a = ioh_spec_for_class(&g_spec, IOH_RC_SEQUENTIAL);
    assert_non_null(a);
    assert_int_equal(a->flags, IOH_ACT_SEQUENTIAL | IOH_ACT_NOREUSE);
    a = ioh_spec_for_class(&g_spec, IOH_RC_SMALL);
    assert_non_null(a);
    assert_int_equal(a->coalesce_block, M);
    a = ioh_spec_for_class(&g_spec, IOH_RC_REREAD);
    assert_non_null(a);
    assert_int_equal(a->flags, IOH_ACT_KEEP_HINTS);
    assert_null(ioh_spec_for_class(&g_spec, IOH_RC_STRIDED));
    assert_null(ioh_spec_for_class(&g_spec, IOH_RC_REVERSE));
    /* Class rules never match paths and path rules never match classes. */
    text_ok("path * coalesce\n");
    assert_false(g_spec.class_rules);
    assert_null(ioh_spec_for_class(&g_spec, IOH_RC_SEQUENTIAL));
    assert_int_equal(ioh_spec_for_path(&g_spec, "/x")->flags, IOH_ACT_COALESCE);
    assert_int_equal(g_spec.dflt.flags, 0);                /* no default: none */
    /* Every class name. */
    text_ok("default auto\n"
            "class sequential random\nclass reverse random\nclass strided random\n"
            "class windowed random\nclass sparse random\nclass re-read random\n"
            "class small random\n");
    for (int c = 0; c < IOH_RC_COUNT; c++)
        assert_non_null(ioh_spec_for_class(&g_spec, (enum ioh_rule_class)c));
    /* Empty and comment-only files are "none". */
    text_ok("");
    assert_true(ioh_spec_is_none(&g_spec));
    text_ok("# nothing\n\n   \n");
    assert_true(ioh_spec_is_none(&g_spec));
    /* No final newline. */
    text_ok("default coalesce");
    assert_int_equal(g_spec.dflt.flags, IOH_ACT_COALESCE);
}

static void file_errors(void **state)
{
    (void)state;
    text_bad("default auto\nfrobnicate * coalesce\n", 2, "unknown rule 'frobnicate'");
    text_bad("\n\n\nclass bogus coalesce\n", 4, "unknown class 'bogus'");
    text_bad("path /x/* sequentail\n", 1, "unknown action 'sequentail'");
    text_bad("# c\npath /x/* coalesce=12Q\n", 2, "bad size '12Q'");
    text_bad("class small coalesce=1K\n", 1, "coalesce block 1K out of range");
    text_bad("default sequential,random\n", 1, "'random' contradicts");
    text_bad("default auto\ndefault none\n", 2, "second 'default'");
    text_bad("default\n", 1, "'default' needs actions");
    text_bad("path /data/*\n", 1, "'path' needs a glob and actions");
    text_bad("class sequential\n", 1, "'class' needs a class and actions");
    text_bad("class\n", 1, "needs a class");
    text_bad("path /a none,coalesce\n", 1, "'none' cannot be combined");
    /* A comment does not hide an error before it. */
    text_bad("path /a bogus # comment\n", 1, "unknown action 'bogus'");
    /* Too long a line: named by its number. */
    size_t n = 3000;
    char *text = malloc(n + 64);
    assert_non_null(text);
    strcpy(text, "default auto\n# ok\npath /");
    size_t at = strlen(text);
    memset(text + at, 'a', n);
    strcpy(text + at + n, " coalesce\n");
    text_bad(text, 3, "line too long");
    /* A glob longer than a rule holds. */
    text[0] = '\0';
    strcpy(text, "path /");
    memset(text + 6, 'g', IOH_SPEC_GLOB_MAX);
    strcpy(text + 6 + IOH_SPEC_GLOB_MAX, " coalesce\n");
    text_bad(text, 1, "glob too long");
    free(text);
    /* More rules than fit. */
    char *many = malloc(64 * (IOH_SPEC_MAX_RULES + 2));
    assert_non_null(many);
    many[0] = '\0';
    for (int i = 0; i < IOH_SPEC_MAX_RULES + 1; i++)
        sprintf(many + strlen(many), "path /r%d coalesce\n", i);
    text_bad(many, IOH_SPEC_MAX_RULES + 1, "more than");
    free(many);
}

/* What a file may not say twice: a rule for the same class or the same glob
 * (the second never applied: both were taken silently), a default (as
 * before). The message names the line of the first. */
static void file_repeats(void **state)
{
    (void)state;
    text_bad("default auto\nclass sequential sequential,noreuse\nclass small coalesce\n"
             "class sequential random\n", 4,
             "a second rule for class 'sequential' (line 2 has one)");
    text_bad("default auto\nclass re-read none\n# c\nclass re-read none\n", 4,
             "class 're-read'");
    text_bad("path /data/* random\npath *.bai none\npath /data/* sequential\n", 3,
             "a second rule for glob '/data/*' (line 1 has one");
    text_bad("path \"/my data/*\" random\npath \"/my data/*\" sequential\n", 2,
             "glob '/my data/*'");
    text_bad("default auto\n\ndefault none\n", 3, "second 'default' rule (line 1 has one)");
    /* Not repeats: another glob, the same glob in another kind of rule. */
    text_ok("default auto\npath /data/* random\npath /data/*.bam none\npath /data/** none\n"
            "class sequential sequential\nclass small coalesce\n");
    assert_int_equal(g_spec.nrules, 5);
}

/* `class` rules act only under auto (classes come from auto's classifier): a
 * file with class rules and no auto anywhere had them ignored silently. The
 * message names the first class rule's line. */
static void class_rules_need_auto(void **state)
{
    (void)state;
    text_bad("# only classes\nclass sequential sequential\nclass small coalesce\n", 2,
             "'class' rules act only under auto");
    text_bad("default coalesce\npath /x/* sequential\nclass small coalesce\n", 3,
             "no default or path rule says auto");
    /* An `auto` in a class rule's own actions does not count: the rule is
     * only reached under auto. */
    text_bad("default none\nclass sparse auto,random\n", 2, "only under auto");
    /* auto in the default or in any path rule is enough. */
    text_ok("default auto\nclass small coalesce\n");
    text_ok("path /data/* auto,coalesce=1M\nclass small coalesce\n");
    assert_true(g_spec.class_rules);
    text_ok("class small coalesce\ndefault sequential,auto\n");   /* the order does not matter */
}

/* Globs are matched against the file's absolute path (read back through
 * /proc/self/fd, symlinks resolved): a relative one never matched, and was
 * taken silently. */
static void relative_globs(void **state)
{
    (void)state;
    text_bad("path data/* coalesce\n", 1, "relative glob 'data/*' never matches");
    text_bad("default auto\npath ./x.db random\n", 2, "relative glob './x.db'");
    text_bad("path ~/data/* random\n", 1, "relative glob '~/data/*'");
    text_bad("path \"my data/*\" random\n", 1, "relative glob 'my data/*'");
    text_ok("path /data/* random\npath *.bai none\npath ?tmp/* none\npath [/]x none\n");
    assert_int_equal(ioh_spec_for_path(&g_spec, "/tmp/a")->flags, 0);
    assert_ptr_not_equal(ioh_spec_for_path(&g_spec, "/tmp/a"), &g_spec.dflt);
    assert_ptr_not_equal(ioh_spec_for_path(&g_spec, "/x"), &g_spec.dflt);
}

/* A comment starts at a '#' at the start of a line or after a blank (a '#'
 * anywhere started one: `path /data/#1/x none` lost its actions); a glob in
 * double quotes may hold blanks, with \" and \\ for " and \. */
static void comments_and_quotes(void **state)
{
    (void)state;
    text_ok("path /data/#1/* none\ndefault coalesce # the rest\n#path /x/* random\n"
            "  # indented comment\npath /y/* random\t# after a tab\n");
    assert_int_equal(g_spec.nrules, 2);
    assert_string_equal(g_spec.rules[0].glob, "/data/#1/*");
    assert_ptr_not_equal(ioh_spec_for_path(&g_spec, "/data/#1/a"), &g_spec.dflt);
    assert_ptr_equal(ioh_spec_for_path(&g_spec, "/data/1/a"), &g_spec.dflt);
    assert_int_equal(g_spec.dflt.flags, IOH_ACT_COALESCE);
    assert_int_equal(ioh_spec_for_path(&g_spec, "/y/z")->flags, IOH_ACT_RANDOM);
    /* A '#' glued to a word is part of it, and an error where a word cannot
     * hold one (no silent half-comment). */
    text_bad("default coalesce#8K\n", 1, "unknown action 'coalesce#8K'");
    text_bad("path /a/* none#x\n", 1, "unknown action 'none#x'");
    text_bad("path # /a/* none\n", 1, "'path' needs a glob and actions");
    text_bad("path /a/* # none\n", 1, "'path' needs a glob and actions");

    /* Quoted globs: blanks, a '#', escapes. */
    text_ok("path \"/data/my files/*\" sequential   # spaces\n"
            "path \"/data/a #1/*\" random\n"
            "path \"/q/say \\\"hi\\\"\" none\n"
            "path \"/b/back\\\\slash\" willneed\n"
            "path \"/s/\\*\" noreuse\n"
            "path \"/t/\"\tkeep-hints\n");
    assert_int_equal(g_spec.nrules, 6);
    assert_string_equal(g_spec.rules[0].glob, "/data/my files/*");
    assert_string_equal(g_spec.rules[1].glob, "/data/a #1/*");
    assert_string_equal(g_spec.rules[2].glob, "/q/say \"hi\"");
    assert_string_equal(g_spec.rules[3].glob, "/b/back\\slash");
    assert_string_equal(g_spec.rules[4].glob, "/s/\\*");     /* fnmatch's escape stays */
    assert_string_equal(g_spec.rules[5].glob, "/t/");
    assert_int_equal(ioh_spec_for_path(&g_spec, "/data/my files/x y")->flags,
                     IOH_ACT_SEQUENTIAL);
    assert_int_equal(ioh_spec_for_path(&g_spec, "/data/a #1/x")->flags, IOH_ACT_RANDOM);
    assert_ptr_not_equal(ioh_spec_for_path(&g_spec, "/q/say \"hi\""), &g_spec.dflt);
    /* fnmatch reads the one backslash as an escape of 's' */
    assert_int_equal(ioh_spec_for_path(&g_spec, "/b/backslash")->flags, IOH_ACT_WILLNEED);
    assert_int_equal(ioh_spec_for_path(&g_spec, "/s/*")->flags, IOH_ACT_NOREUSE);
    assert_ptr_equal(ioh_spec_for_path(&g_spec, "/s/x"), &g_spec.dflt);
    /* A '"' inside an unquoted glob is a character like any other. */
    text_ok("path /a\"b none\n");
    assert_string_equal(g_spec.rules[0].glob, "/a\"b");
    /* Quoting errors name the line and the glob. */
    text_bad("path \"/data/my files/* none\n", 1, "no closing quote in glob \"/data/my");
    text_bad("path \"/a\\\" none\n", 1, "no closing quote");
    text_bad("path \"/a b\"c none\n", 1, "text right after the closing quote of glob \"/a b\"");
    text_bad("path \"/a b\"# c\n", 1, "text right after the closing quote");
    text_bad("path \"\" none\n", 1, "empty glob");
    text_bad("path \"/a b\"\n", 1, "'path' needs a glob and actions");
    text_bad("path \"/a b\" # c\n", 1, "'path' needs a glob and actions");
    /* Only globs are quoted. */
    text_bad("default auto\nclass \"small\" coalesce\n", 2, "unknown class '\"small\"'");
}

/* Policy files on disk: errors name the file's path and the line. */
static void files_on_disk(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ioh-spec-%d.policy", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("default coalesce=8K\npath /tmp/* sequential\n", f);
    fclose(f);
    struct ioh_spec s;
    assert_int_equal(ioh_spec_parse(path, &s, g_err, sizeof g_err), 0);
    assert_string_equal(s.source, path);
    assert_int_equal(s.dflt.coalesce_block, 8 * K);
    assert_int_equal(ioh_spec_for_path(&s, "/tmp/a/b")->flags, IOH_ACT_SEQUENTIAL);

    f = fopen(path, "w");
    fputs("default auto\n\npath /x/* coalesce\nclass windowed window=64Q\n", f);
    fclose(f);
    assert_int_equal(ioh_spec_parse(path, &s, g_err, sizeof g_err), -1);
    char want[128];
    snprintf(want, sizeof want, "%s line 4: bad size '64Q' for window", path);
    if (!strstr(g_err, want))
        fail_msg("message \"%s\" lacks \"%s\"", g_err, want);

    /* Binary junk is not a policy file. */
    f = fopen(path, "w");
    fputs("default auto", f);
    fputc('\0', f);
    fputs("x\n", f);
    fclose(f);
    assert_int_equal(ioh_spec_parse(path, &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, path));
    assert_non_null(strstr(g_err, "not a text file"));

    /* A directory is not one either. */
    assert_int_equal(ioh_spec_parse("/tmp/", &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "policy file /tmp/"));

    /* Larger than 1 MiB. */
    f = fopen(path, "w");
    for (int i = 0; i < 40000; i++)
        fputs("# padding padding padding padding\n", f);
    fclose(f);
    assert_int_equal(ioh_spec_parse(path, &s, g_err, sizeof g_err), -1);
    assert_non_null(strstr(g_err, "larger than 1 MiB"));
    unlink(path);
}

/* The text form parses back to the same actions. */
static void format_round_trip(void **state)
{
    (void)state;
    const char *cases[] = {
        "none", "sequential", "random", "normal", "willneed", "noreuse", "coalesce",
        "coalesce=4K", "prefetch=16M", "window=1G", "keep-hints", "auto",
        "sequential,coalesce,prefetch", "random,willneed,noreuse,window=64M,keep-hints,auto",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ioh_actions a = ok(cases[i]), b;
        char text[256];
        ioh_actions_format(&a, text, sizeof text);
        if (ioh_actions_parse(text, &b, "fmt", g_err, sizeof g_err) != 0)
            fail_msg("'%s' formats as '%s', which does not parse: %s", cases[i], text, g_err);
        assert_int_equal(a.flags, b.flags);
        if (a.flags & IOH_ACT_COALESCE)
            assert_int_equal(a.coalesce_block, b.coalesce_block);
        if (a.flags & IOH_ACT_PREFETCH)
            assert_int_equal(a.prefetch_distance, b.prefetch_distance);
        if (a.flags & IOH_ACT_WINDOW)
            assert_int_equal(a.window_size, b.window_size);
    }
    struct ioh_actions a = ok("sequential,coalesce=4K");
    char text[64];
    ioh_actions_format(&a, text, sizeof text);
    assert_string_equal(text, "sequential,coalesce=4K");
    /* A buffer too small truncates, never overflows. */
    char tiny[12];
    memset(tiny, 'x', sizeof tiny);
    a = ok("sequential,coalesce,prefetch,window,noreuse");
    ioh_actions_format(&a, tiny, 8);
    assert_true(memchr(tiny, '\0', 8) != NULL);
    assert_int_equal(tiny[8], 'x');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_action),
        cmocka_unit_test(sizes),
        cmocka_unit_test(action_errors),
        cmocka_unit_test(empty_words_and_none),
        cmocka_unit_test(stray_commas),
        cmocka_unit_test(repeated_actions),
        cmocka_unit_test(contradicting_hints),
        cmocka_unit_test(policy_strings),
        cmocka_unit_test(file_rules),
        cmocka_unit_test(file_errors),
        cmocka_unit_test(file_repeats),
        cmocka_unit_test(class_rules_need_auto),
        cmocka_unit_test(relative_globs),
        cmocka_unit_test(comments_and_quotes),
        cmocka_unit_test(files_on_disk),
        cmocka_unit_test(format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
