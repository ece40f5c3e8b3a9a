/* Unit tests for analyzer/report_html.c over a synthetic analysis: an
 * ATLAS-like windowed file after a sequential header (seed 001), a reverse
 * file, a strided one and a file too small to classify, with hostile paths.
 * The page must be self-contained (no URL, no script), escape what came from
 * the trace, and keep its tags balanced. IOH_HTML_OUT=FILE keeps the page
 * (for a look in a browser); otherwise it goes to a temp file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "report_html.h"

#define MiB (1024.0 * 1024.0)

static struct ioh_analysis g_an;
static char *g_page;
static size_t g_page_len;

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static double rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

static void add_read(struct ioh_an_file *f, uint64_t t, uint64_t off, uint32_t len,
                     uint32_t phase)
{
    struct ioh_an_point *p = &f->points[f->npoints];
    p->t = t;
    p->off = (int64_t)off;
    p->len = len;
    p->phase = phase;
    p->index = f->npoints;
    f->npoints++;
    f->m.reads++;
    f->m.bytes += len;
    if (f->m.reads == 1 || off < f->m.min_off)
        f->m.min_off = off;
    if (off + len > f->m.max_end)
        f->m.max_end = off + len;
    if (f->m.reads == 1)
        f->m.first_t = t;
    f->m.last_t = t;
    int b = 0;
    while (b < IOH_AN_SIZE_BUCKETS - 1 && (1ull << b) <= len)
        b++;
    f->size_hist[b]++;
    struct ioh_cls_phase *ph = &f->phases[phase];
    if (ph->reads == 0)
        ph->t_start = t;
    ph->t_end = t;
    ph->reads++;
    ph->bytes += len;
}

static void seek(struct ioh_an_file *f, int64_t d)
{
    int b = 0;
    uint64_t a = (uint64_t)(d < 0 ? -d : d);
    while (a) {
        a >>= 1;
        b++;
    }
    f->seek_hist[IOH_AN_SEEK_ZERO + (d < 0 ? -b : b)]++;
}

static struct ioh_an_file *new_file(uint32_t index, const char *path, int64_t size,
                                    enum ioh_cls_class cls, uint32_t nphases, uint32_t npoints)
{
    struct ioh_an_file *f = &g_an.files[index];
    f->index = index;
    f->path = strdup(path);
    f->size = size;
    f->kind = IOH_FILE_REG;
    f->processes = 1;
    f->nstreams = 1;
    f->cls = cls;
    f->confidence = 0.9;
    f->significant = cls != IOH_CLS_UNKNOWN;
    f->detail.cls = cls;
    f->nphases = nphases;
    f->phases = calloc(nphases ? nphases : 1, sizeof *f->phases);
    f->points = calloc(npoints ? npoints : 1, sizeof *f->points);
    f->point_stride = 1;
    snprintf(f->rec.policy, sizeof f->rec.policy, "none");
    return f;
}

static void site(uint32_t i, const char *module, const char *symbol, uint64_t off)
{
    struct ioh_an_site *s = &g_an.sites[i];
    s->index = i;
    s->nframes = 3;
    s->frames = calloc(3, sizeof *s->frames);
    for (uint32_t k = 0; k < 3; k++) {
        s->frames[k].module = strdup(module);
        s->frames[k].symbol = strdup(k == 0 ? symbol : k == 1 ? "main" : "");
        s->frames[k].module_offset = off + k * 0x40;
        s->frames[k].symbol_offset = 0x1c + k;
    }
}

static void build(void)
{
    struct ioh_analysis *an = &g_an;
    memset(an, 0, sizeof *an);
    an->t0 = 1000000000ull;
    an->nfiles = 4;
    an->files = calloc(4, sizeof *an->files);
    an->ranked = calloc(4, sizeof *an->ranked);
    an->nsites = 3;
    an->sites = calloc(3, sizeof *an->sites);
    site(0, "/opt/atlas/lib/libRootIO.so", "TBasket::ReadBuffer", 0x1234);
    site(1, "/usr/bin/tac", "", 0x14286);
    site(2, "/home/u/<b>evil</b>/reader", "read_chunk<int>", 0x99);

    /* 1: ATLAS AOD: a sequential header, then reads hopping inside a 20 MiB
     * window drifting forward through a 2 GiB file. */
    uint64_t t = an->t0 + 2000000;
    struct ioh_an_file *f = new_file(0, "/data/atlas/AOD.\"run 1\".root", 2048 * (int64_t)MiB,
                                     IOH_CLS_WINDOWED, 2, 6000);
    uint64_t off = 0, prev_end = 0;
    for (int i = 0; i < 400; i++) {
        add_read(f, t, off, 16384, 0);
        seek(f, (int64_t)off - (int64_t)prev_end);
        prev_end = off + 16384;
        off += 16384;
        t += 20000;
    }
    for (int i = 0; i < 5600; i++) {
        double centre = 245 * MiB + i * 365 * MiB / 5600.0;
        uint64_t o = (uint64_t)(centre + (rnd() - 0.5) * 20 * MiB);
        uint32_t len = 512 + (uint32_t)(rnd() * 3000);
        add_read(f, t, o, len, 1);
        seek(f, (int64_t)o - (int64_t)prev_end);
        prev_end = o + len;
        t += 150000 + (uint64_t)(rnd() * 100000);
    }
    f->phases[0].cls = IOH_CLS_SEQUENTIAL;
    f->phases[0].confidence = 0.97;
    f->phases[0].detail.request_size = 16384;
    f->phases[1].cls = IOH_CLS_WINDOWED;
    f->phases[1].confidence = 0.82;
    f->phases[1].detail.window = 20 * (uint64_t)MiB;
    f->phases[1].detail.window_ratio = 20.0 / 2048;
    f->phases[1].detail.drift_per_sec = 1.9 * MiB;
    f->phases[1].detail.small = true;
    f->detail = f->phases[1].detail;
    f->detail.cls = IOH_CLS_WINDOWED;
    f->small = true;
    f->main_phase = 1;
    f->footprint = f->m.bytes * 9 / 10;
    f->reread_ratio = 0.1;
    f->nsites = 1;
    f->sites[0] = (struct ioh_an_site_use){.site = 0, .reads = f->m.reads, .bytes = f->m.bytes};
    snprintf(f->rec.policy, sizeof f->rec.policy, "random,window=32M");
    snprintf(f->rec.reason, sizeof f->rec.reason,
             "90%% of reads fall in a 20 MiB window that drifts 1.9 MiB/s");
    f->rec.speedup = 6.4;
    f->rec.baseline = (struct ioh_an_effect){.policy = "default", .valid = true, .reads = 6000,
                                             .hits = 800, .misses = 5200, .requests = 5200,
                                             .syscalls = 6000, .fetched = 700 * (uint64_t)MiB,
                                             .unused = 600 * (uint64_t)MiB, .hit_rate = 0.13,
                                             .cost_ns = 4.1e8};
    f->rec.predicted = (struct ioh_an_effect){.policy = "window=32M", .valid = true,
                                              .reads = 6000, .hits = 5900, .misses = 100,
                                              .requests = 2100, .syscalls = 6000,
                                              .fetched = 2100 * (uint64_t)MiB,
                                              .unused = 300 * (uint64_t)MiB, .hit_rate = 0.983,
                                              .cost_ns = 6.4e7};

    /* 2: tac: reverse in 8 KiB steps. */
    f = new_file(1, "/var/log/syslog", 2 * (int64_t)MiB, IOH_CLS_REVERSE, 1, 256);
    t = an->t0 + 1000000;
    prev_end = 0;
    for (int i = 0; i < 256; i++) {
        uint64_t o = 2 * (uint64_t)MiB - (uint64_t)(i + 1) * 8192;
        add_read(f, t, o, 8192, 0);
        if (i)
            seek(f, (int64_t)o - (int64_t)prev_end);
        prev_end = o + 8192;
        t += 3000;
    }
    f->phases[0].cls = IOH_CLS_REVERSE;
    f->phases[0].confidence = 0.99;
    f->detail.stride = -8192;
    f->footprint = f->m.bytes;
    f->nsites = 1;
    f->sites[0] = (struct ioh_an_site_use){.site = 1, .reads = 256, .bytes = f->m.bytes};
    snprintf(f->rec.policy, sizeof f->rec.policy, "willneed");

    /* 3: strided, 1 KiB every 10 KiB (seed 001's forward reader). */
    f = new_file(2, "/tmp/<script>alert(1)</script>.bin", 40 * (int64_t)MiB, IOH_CLS_STRIDED, 1,
                 4000);
    t = an->t0 + 5000000;
    prev_end = 0;
    for (int i = 0; i < 4000; i++) {
        uint64_t o = (uint64_t)i * 10240;
        add_read(f, t, o, 1024, 0);
        if (i)
            seek(f, (int64_t)o - (int64_t)prev_end);
        prev_end = o + 1024;
        t += 25000;
    }
    f->phases[0].cls = IOH_CLS_STRIDED;
    f->phases[0].confidence = 0.95;
    f->detail.stride = 10240;
    f->detail.request_size = 1024;
    f->footprint = f->m.bytes;
    f->nsites = 2;
    f->sites[0] = (struct ioh_an_site_use){.site = 2, .reads = 3000, .bytes = 3000 * 1024};
    f->sites[1] = (struct ioh_an_site_use){.site = IOH_AN_NO_SITE, .reads = 1000,
                                           .bytes = 1000 * 1024};

    /* 4: two reads: too few to classify. */
    f = new_file(3, "/etc/ld.so.cache", 30000, IOH_CLS_UNKNOWN, 0, 2);

    an->ranked[0] = 0, an->ranked[1] = 2, an->ranked[2] = 1, an->ranked[3] = 3;
    an->t1 = t;
    for (uint32_t i = 0; i < an->nfiles; i++) {
        an->reads += an->files[i].m.reads;
        an->bytes += an->files[i].m.bytes;
    }
    an->nprocesses = 1;
    an->processes = calloc(1, sizeof *an->processes);
    an->processes[0].pid = 4242;
    an->processes[0].ppid = 1;
    an->processes[0].argc = 2;
    an->processes[0].argv = calloc(2, sizeof(char *));
    an->processes[0].argv[0] = strdup("athena");
    an->processes[0].argv[1] = strdup("--input=a&b");
    an->processes[0].exe = strdup("/usr/bin/athena");
    an->processes[0].finished = true;
    an->processes[0].end_ns = t;
    an->processes[0].start_ns = an->t0;
    an->finished = true;
}

static int setup(void **state)
{
    (void)state;
    build();
    const char *keep = getenv("IOH_HTML_OUT");
    char tmp[] = "/tmp/ioh-html-test-XXXXXX";
    const char *path = keep;
    if (!path) {
        int fd = mkstemp(tmp);
        if (fd < 0)
            return -1;
        close(fd);
        path = tmp;
    }
    if (ioh_report_html(&g_an, path) != 0)
        return -1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    g_page_len = (size_t)ftell(f);
    rewind(f);
    g_page = malloc(g_page_len + 1);
    size_t n = fread(g_page, 1, g_page_len, f);
    fclose(f);
    g_page[n] = '\0';
    if (!keep)
        unlink(tmp);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(g_page);
    return 0;
}

static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_self_contained(void **state)
{
    (void)state;
    assert_int_equal(strncmp(g_page, "<!DOCTYPE html>", 15), 0);
    assert_null(strstr(g_page, "http://"));
    assert_null(strstr(g_page, "https://"));
    assert_null(strstr(g_page, "<script"));
    assert_null(strstr(g_page, "<link"));
    assert_null(strstr(g_page, "@import"));
    assert_null(strstr(g_page, "url("));
    assert_non_null(strstr(g_page, "</html>\n"));
}

static void test_escaped(void **state)
{
    (void)state;
    assert_non_null(strstr(g_page, "/tmp/&lt;script&gt;alert(1)&lt;/script&gt;.bin"));
    assert_non_null(strstr(g_page, "AOD.&quot;run 1&quot;.root"));
    /* The prediction's row is named as the policy told, its model after
     * (a tester read prefetch=2M and sequential,prefetch=2M as two). */
    assert_non_null(strstr(g_page, "<td>with <code>random,window=32M</code> (modelled as "
                                   "<code>window=32M</code>)</td>"));
    assert_non_null(strstr(g_page, "--input=a&amp;b"));
    assert_non_null(strstr(g_page, "read_chunk&lt;int&gt;"));
    assert_null(strstr(g_page, "<b>evil"));
}

static void test_balanced(void **state)
{
    (void)state;
    static const char *const tags[] = {"table", "svg", "section", "details", "tr", "code"};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        char open[32], close[32];
        snprintf(open, sizeof open, "<%s", tags[i]);
        snprintf(close, sizeof close, "</%s>", tags[i]);
        /* "<tr" also matches nothing else on this page; "<svg" neither. */
        assert_int_equal(occurrences(g_page, open), occurrences(g_page, close));
    }
}

static void test_content(void **state)
{
    (void)state;
    /* Three significant files: a section each with three pictures, and the
     * windowed one a zoom on its first reads as well. */
    assert_int_equal(occurrences(g_page, "<section"), 3);
    assert_int_equal(occurrences(g_page, "<svg"), 10);
    assert_non_null(strstr(g_page, "Zoom: the first 1000 sampled reads of phase P2"));
    /* The windowed file: two phases, both classes in the legend, a boundary. */
    assert_non_null(strstr(g_page, ">P2</text>"));
    assert_non_null(strstr(g_page, "windowed ("));
    assert_non_null(strstr(g_page, "sequential ("));
    assert_non_null(strstr(g_page, "class=\"phase\""));
    /* Axes say their units. */
    assert_non_null(strstr(g_page, "time since the run started (ms)"));
    assert_non_null(strstr(g_page, "offset in the file (GiB)"));
    assert_non_null(strstr(g_page, "read number in the file"));
    assert_non_null(strstr(g_page, "request size in bytes"));
    /* Recommendation and call sites. */
    assert_non_null(strstr(g_page, "random,window=32M"));
    assert_non_null(strstr(g_page, "TBasket::ReadBuffer"));
    assert_non_null(strstr(g_page, "(no call site)"));
    /* A site's callers are the first stack the shim saw at its address
     * (docs/shim.md), and the page says so where it shows them: HDF5's
     * hyperslab reads all showed the superblock read's stack (a tester). */
    assert_non_null(strstr(g_page, "first stack seen here: called from <code>libRootIO.so+0x1274 (main"));
    assert_non_null(strstr(g_page, "1 file with too few reads"));
    /* Bounded: at most one mark per pixel and class keeps the page small. */
    assert_true(g_page_len < 600 * 1024);
}

static void test_helpers(void **state)
{
    (void)state;
    assert_true(ioh_html_nice_step(1000, 5) == 200);
    assert_true(ioh_html_nice_step(7, 8) == 1);
    double d = ioh_html_nice_step(0.03, 6) - 0.005;
    assert_true(d < 1e-12 && d > -1e-12);
    assert_true(ioh_html_nice_step(0, 6) == 1);
    char b[32];
    assert_string_equal(ioh_html_bytes(b, sizeof b, 512), "512 B");
    assert_string_equal(ioh_html_bytes(b, sizeof b, 4096), "4 KiB");
    assert_string_equal(ioh_html_bytes(b, sizeof b, 1.5 * MiB), "1.50 MiB");
    assert_string_equal(ioh_html_bytes(b, sizeof b, 20 * MiB), "20 MiB");

    char *s = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&s, &n);
    ioh_html_escape(m, "a<b>&\"'\x01\xff\xc3\xa9", 11);
    fclose(m);
    assert_string_equal(s, "a&lt;b&gt;&amp;&quot;&#39;&#xfffd;&#xfffd;\xc3\xa9");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_contained),
        cmocka_unit_test(test_escaped),
        cmocka_unit_test(test_balanced),
        cmocka_unit_test(test_content),
        cmocka_unit_test(test_helpers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
