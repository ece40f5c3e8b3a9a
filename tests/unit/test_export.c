/* Unit tests for analyzer/export.c: the text helpers (CSV quoting, JSON
 * escaping, fio names) and the three writers driven by synthetic events,
 * compared with the exact text they must produce. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "export.h"

/* ---- helpers --------------------------------------------------------- */

struct mem {
    char *buf;
    size_t len;
    FILE *f;
};

static void mem_open(struct mem *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
}

static char *mem_close(struct mem *m)
{
    fclose(m->f);
    return m->buf;
}

static struct ioh_rec_path *mkpath(uint32_t id, const char *path, uint32_t kind, int64_t size)
{
    size_t n = strlen(path);
    struct ioh_rec_path *p = calloc(1, sizeof *p + n + 8);
    p->type = IOH_REC_PATH;
    p->size8 = (uint16_t)((sizeof *p + n + 7) / 8);
    p->file = id;
    p->kind = kind;
    p->size = size;
    p->path_len = (uint32_t)n;
    memcpy(p + 1, path, n);
    return p;
}

static struct ioh_event mkev(uint16_t op, uint32_t file, int64_t off, uint64_t len, int64_t ret)
{
    struct ioh_event e;
    memset(&e, 0, sizeof e);
    e.type = IOH_REC_EVENT;
    e.size8 = 8;
    e.op = op;
    e.tid = 100;
    e.fd = 3;
    e.file = file;
    e.off = off;
    e.len = len;
    e.ret = ret;
    e.dur = 1500;
    return e;
}

static void feed(struct ioh_export_writer *w, const struct ioh_event *ev,
                 const struct ioh_rec_path *p, uint64_t t_ns, const char *site)
{
    struct ioh_export_event e = {.ev = ev, .t_ns = t_ns, .pid = 100, .src = 0, .file = p,
                                 .site = site ? site : ""};
    assert_int_equal(ioh_export_writer_event(w, &e), 0);
}

static char *csv_of(const char *s, size_t n)
{
    struct mem m;
    mem_open(&m);
    ioh_export_csv_field(m.f, s, n);
    return mem_close(&m);
}

static char *json_of(const char *s, size_t n)
{
    struct mem m;
    mem_open(&m);
    ioh_export_json_string(m.f, s, n);
    return mem_close(&m);
}

/* ---- text helpers ---------------------------------------------------- */

static void test_csv_field(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"/data/plain.bin", "/data/plain.bin"},
        {"", ""},
        {"/a,b", "\"/a,b\""},
        {"/say \"hi\"", "\"/say \"\"hi\"\"\""},
        {"/line\nbreak", "\"/line\nbreak\""},
        {"/cr\rhere", "\"/cr\rhere\""},
        {" lead", "\" lead\""},
        {"trail ", "\"trail \""},
        {"/in side/ok", "/in side/ok"},
        {"\"", "\"\"\"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = csv_of(cases[i].in, strlen(cases[i].in));
        assert_string_equal(s, cases[i].out);
        free(s);
    }
}

static void test_json_string(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t n;
        const char *out;
    } cases[] = {
        {"/plain", 6, "\"/plain\""},
        {"a\"b", 3, "\"a\\\"b\""},
        {"C:\\dir", 6, "\"C:\\\\dir\""},
        {"t\tn\nr\r", 6, "\"t\\tn\\nr\\r\""},
        {"\x01\x1f", 2, "\"\\u0001\\u001f\""},
        {"nul\0x", 5, "\"nul\\u0000x\""},
        {"caf\xc3\xa9", 5, "\"caf\xc3\xa9\""},          /* valid UTF-8 kept */
        {"\xe2\x82\xac", 3, "\"\xe2\x82\xac\""},         /* euro sign */
        {"bad\xff", 4, "\"bad\\ufffd\""},               /* invalid byte */
        {"\xc3", 1, "\"\\ufffd\""},                     /* truncated sequence */
        {"\xc0\xaf", 2, "\"\\ufffd\\ufffd\""},           /* overlong '/' */
        {"\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""}, /* surrogate */
        {"\x7f", 1, "\"\x7f\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = json_of(cases[i].in, cases[i].n);
        assert_string_equal(s, cases[i].out);
        free(s);
    }
}

static void test_fio_name(void **state)
{
    (void)state;
    char longname[300];
    memset(longname, 'a', sizeof longname);
    longname[0] = '/';
    assert_true(ioh_export_fio_name_ok("/data/x.bin", 11));
    assert_true(ioh_export_fio_name_ok(longname, 255));
    assert_false(ioh_export_fio_name_ok(longname, 256));
    assert_false(ioh_export_fio_name_ok("", 0));
    assert_false(ioh_export_fio_name_ok("/a b", 4));
    assert_false(ioh_export_fio_name_ok("/a\tb", 4));
    assert_false(ioh_export_fio_name_ok("/a\nb", 4));
    assert_false(ioh_export_fio_name_ok("/x (deleted)", 12));
}

static void test_format_parse(void **state)
{
    (void)state;
    assert_int_equal(ioh_export_format_parse("fio"), IOH_EXPORT_FIO);
    assert_int_equal(ioh_export_format_parse("perfetto"), IOH_EXPORT_PERFETTO);
    assert_int_equal(ioh_export_format_parse("chrome"), IOH_EXPORT_PERFETTO);
    assert_int_equal(ioh_export_format_parse("csv"), IOH_EXPORT_CSV);
    assert_int_equal(ioh_export_format_parse("xml"), 0);
}

/* ---- fio ------------------------------------------------------------- */

static char *fio_run(const struct ioh_export_opts *o, struct ioh_export_stats *st)
{
    struct mem m;
    mem_open(&m);
    struct ioh_export_writer *w = ioh_export_writer_new(o, m.f);
    assert_non_null(w);
    struct ioh_rec_path *reg = mkpath(1, "/nonexistent/ioh/data.bin", IOH_FILE_REG, 100000);
    struct ioh_rec_path *pipe = mkpath(2, "pipe:[1234]", IOH_FILE_PIPE, 0);
    struct ioh_rec_path *proc = mkpath(3, "/proc/self/status", IOH_FILE_REG, 0);
    struct ioh_rec_path *blank = mkpath(4, "/nonexistent/ioh/a b.txt", IOH_FILE_REG, 50);
    struct ioh_event e;

    e = mkev(IOH_OP_OPEN, 1, -1, 0, 3);                 /* not data: ignored */
    feed(w, &e, reg, 1000, NULL);
    e = mkev(IOH_OP_PREAD, 1, 4096, 8192, 8192);
    feed(w, &e, reg, 2000, NULL);
    e = mkev(IOH_OP_READ, 1, 99000, 4096, 1000);        /* short read at the end */
    feed(w, &e, reg, 1002000, NULL);
    e = mkev(IOH_OP_READ, 1, 100000, 4096, 0);          /* EOF */
    feed(w, &e, reg, 1003000, NULL);
    e = mkev(IOH_OP_READ, 1, 0, 4096, -EIO);            /* error */
    feed(w, &e, reg, 1004000, NULL);
    e = mkev(IOH_OP_MMAP, 1, 0, 65536, 0);
    feed(w, &e, reg, 1005000, NULL);
    e = mkev(IOH_OP_READ, 2, -1, 512, 512);             /* pipe */
    e.flags = IOH_EV_NOOFF;
    feed(w, &e, pipe, 1006000, NULL);
    e = mkev(IOH_OP_READ, 3, 0, 1024, 700);             /* procfs */
    feed(w, &e, proc, 1007000, NULL);
    e = mkev(IOH_OP_READ, 4, 0, 50, 50);                /* a name fio cannot scan */
    feed(w, &e, blank, 1008000, NULL);
    e = mkev(IOH_OP_READV, 1, 20000, 30000, 30000);     /* split at max_request */
    feed(w, &e, reg, 3008000, NULL);
    int rc = ioh_export_writer_finish(w, st);
    assert_int_equal(rc, 0);
    free(reg);
    free(pipe);
    free(proc);
    free(blank);
    return mem_close(&m);
}

static void test_fio_v2(void **state)
{
    (void)state;
    struct ioh_export_opts o;
    ioh_export_opts_default(&o, IOH_EXPORT_FIO);
    o.max_request = 16384;
    struct ioh_export_stats st = {0};
    char *out = fio_run(&o, &st);
    assert_string_equal(out,
                        "fio version 2 iolog\n"
                        "/nonexistent/ioh/data.bin add\n"
                        "/nonexistent/ioh/data.bin open\n"
                        "/nonexistent/ioh/data.bin read 4096 8192\n"
                        "/nonexistent/ioh/data.bin read 99000 1000\n"
                        "/nonexistent/ioh/data.bin read 20000 16384\n"
                        "/nonexistent/ioh/data.bin read 36384 13616\n"
                        "/nonexistent/ioh/data.bin close\n");
    free(out);
    assert_int_equal(st.written, 4);
    assert_int_equal(st.bytes, 8192 + 1000 + 30000);
    assert_int_equal(st.files, 1);
    assert_int_equal(st.files_unusable, 1);    /* the path does not exist here */
    assert_int_equal(st.skip_eof, 1);
    assert_int_equal(st.skip_error, 1);
    assert_int_equal(st.skip_mmap, 1);
    assert_int_equal(st.skip_nooff, 1);
    assert_int_equal(st.skip_nonreg, 1);
    assert_int_equal(st.skip_name, 1);
}

static void test_fio_timed_relocated(void **state)
{
    (void)state;
    struct ioh_export_opts o;
    ioh_export_opts_default(&o, IOH_EXPORT_FIO);
    o.timed = true;
    o.relocate = "/replay/";
    o.max_request = 0;
    struct mem map;
    mem_open(&map);
    o.map = map.f;
    struct ioh_export_stats st = {0};
    char *out = fio_run(&o, &st);
    /* Times in us from the first read, starting at 1; blanks in names are
     * fine once relocated. */
    assert_string_equal(out,
                        "fio version 3 iolog\n"
                        "1 /replay/0001-data.bin add\n"
                        "1 /replay/0001-data.bin open\n"
                        "1 /replay/0001-data.bin read 4096 8192\n"
                        "1001 /replay/0001-data.bin read 99000 1000\n"
                        "1007 /replay/0002-a_b.txt add\n"
                        "1007 /replay/0002-a_b.txt open\n"
                        "1007 /replay/0002-a_b.txt read 0 50\n"
                        "3007 /replay/0001-data.bin read 20000 30000\n"
                        "3007 /replay/0001-data.bin close\n"
                        "3007 /replay/0002-a_b.txt close\n");
    free(out);
    char *m = mem_close(&map);
    assert_string_equal(m, "/nonexistent/ioh/data.bin\t/replay/0001-data.bin\t100000\n"
                           "/nonexistent/ioh/a b.txt\t/replay/0002-a_b.txt\t50\n");
    free(m);
    assert_int_equal(st.skip_name, 0);
    assert_int_equal(st.files, 2);
}

static void test_fio_stdio_model(void **state)
{
    (void)state;
    struct ioh_rec_path *p = mkpath(1, "/nonexistent/ioh/lines.txt", IOH_FILE_REG, 10000);
    p->flags = IOH_PATH_STDIO;
    for (int model = 0; model < 2; model++) {
        struct ioh_export_opts o;
        ioh_export_opts_default(&o, IOH_EXPORT_FIO);
        if (!model)
            o.stdio_buffer = 0;
        struct mem m;
        mem_open(&m);
        struct ioh_export_writer *w = ioh_export_writer_new(&o, m.f);
        /* fgets line by line: 100-byte lines, then a seek back to 0. */
        struct ioh_event e;
        for (int i = 0; i < 45; i++) {
            e = mkev(IOH_OP_FGETS, 1, i * 100, 4095, 100);
            feed(w, &e, p, (uint64_t)i * 1000, NULL);
        }
        e = mkev(IOH_OP_FREAD, 1, 0, 10, 10);
        feed(w, &e, p, 50000, NULL);
        e = mkev(IOH_OP_GETDELIM, 1, 9950, 0, 50);       /* the last, short block */
        feed(w, &e, p, 60000, NULL);
        struct ioh_export_stats st = {0};
        assert_int_equal(ioh_export_writer_finish(w, &st), 0);
        char *out = mem_close(&m);
        if (model) {
            /* Buffer refills: blocks 0, 4096 (line 40 crosses into it), 0
             * again after the seek, then the last block up to the size. */
            assert_string_equal(out, "fio version 2 iolog\n"
                                     "/nonexistent/ioh/lines.txt add\n"
                                     "/nonexistent/ioh/lines.txt open\n"
                                     "/nonexistent/ioh/lines.txt read 0 4096\n"
                                     "/nonexistent/ioh/lines.txt read 4096 4096\n"
                                     "/nonexistent/ioh/lines.txt read 0 4096\n"
                                     "/nonexistent/ioh/lines.txt read 8192 1808\n"
                                     "/nonexistent/ioh/lines.txt close\n");
            assert_int_equal(st.written, 4);
        } else {
            assert_int_equal(st.written, 47);
            assert_non_null(strstr(out, "lines.txt read 4400 100\n"));
        }
        free(out);
    }
    free(p);
}

/* ---- csv and perfetto ------------------------------------------------ */

static void test_csv_writer(void **state)
{
    (void)state;
    struct ioh_export_opts o;
    ioh_export_opts_default(&o, IOH_EXPORT_CSV);
    struct mem m;
    mem_open(&m);
    struct ioh_export_writer *w = ioh_export_writer_new(&o, m.f);
    struct ioh_rec_path *p = mkpath(1, "/d/a,\"b\".txt", IOH_FILE_REG, 10);
    struct ioh_event e = mkev(IOH_OP_PREAD, 1, 4096, 512, 512);
    feed(w, &e, p, 1234567890, "prog+0x10 (main+0x4)");
    e = mkev(IOH_OP_LSEEK, 1, 0, 0, 0);
    e.len = (uint64_t)-5;                                 /* requested offset, signed */
    e.ret = -EINVAL;
    e.off = -1;
    feed(w, &e, p, 1234567891, NULL);
    e = mkev(IOH_OP_CLOSE, 0, -1, 0, 0);
    e.aux = 1;
    feed(w, &e, p, 2000000000, NULL);
    struct ioh_export_stats st = {0};
    assert_int_equal(ioh_export_writer_finish(w, &st), 0);
    char *out = mem_close(&m);
    assert_string_equal(out,
                        "time,pid,tid,op,fd,path,offset,length,ret,dur_ns,site\n"
                        "1.234567890,100,100,pread,3,\"/d/a,\"\"b\"\".txt\",4096,512,512,1500,"
                        "prog+0x10 (main+0x4)\n"
                        "1.234567891,100,100,lseek,3,\"/d/a,\"\"b\"\".txt\",,-5,-22,1500,\n"
                        "2.000000000,100,100,close,3,\"/d/a,\"\"b\"\".txt\",,,0,1500,\n");
    free(out);
    assert_int_equal(st.written, 3);

    /* --data-only keeps the read alone. */
    o.data_only = true;
    mem_open(&m);
    w = ioh_export_writer_new(&o, m.f);
    e = mkev(IOH_OP_OPEN, 1, -1, 0, 3);
    feed(w, &e, p, 1, NULL);
    e = mkev(IOH_OP_READ, 1, 0, 10, 10);
    feed(w, &e, p, 2, NULL);
    memset(&st, 0, sizeof st);
    ioh_export_writer_finish(w, &st);
    free(mem_close(&m));
    assert_int_equal(st.written, 1);
    assert_int_equal(st.skip_filter, 1);
    free(p);
}

static void test_perfetto_writer(void **state)
{
    (void)state;
    struct ioh_export_opts o;
    ioh_export_opts_default(&o, IOH_EXPORT_PERFETTO);
    o.path_glob = "/d/*";
    struct mem m;
    mem_open(&m);
    struct ioh_export_writer *w = ioh_export_writer_new(&o, m.f);
    struct ioh_export_process proc = {.pid = 100, .ppid = 1, .name = "cat \"x\"", .host = "h"};
    ioh_export_writer_process(w, &proc);
    struct ioh_rec_path *p = mkpath(1, "/d/q\"\\\x01.bin", IOH_FILE_REG, 10);
    struct ioh_rec_path *other = mkpath(2, "/elsewhere", IOH_FILE_REG, 10);
    struct ioh_event e = mkev(IOH_OP_READ, 1, 0, 4096, 10);
    feed(w, &e, p, 1234567, "s\"ite");
    e = mkev(IOH_OP_READ, 2, 0, 4096, 10);
    feed(w, &e, other, 1234568, NULL);                    /* filtered out */
    struct ioh_export_stats st = {0};
    assert_int_equal(ioh_export_writer_finish(w, &st), 0);
    char *out = mem_close(&m);
    assert_string_equal(
        out,
        "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iohint export\"},"
        "\"traceEvents\":[\n"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,"
        "\"args\":{\"name\":\"cat \\\"x\\\"\"}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":100,"
        "\"args\":{\"name\":\"cat \\\"x\\\"\"}},\n"
        "{\"ph\":\"X\",\"name\":\"read\",\"cat\":\"data\",\"ts\":1234.567,\"dur\":1.500,"
        "\"pid\":100,\"tid\":100,\"args\":{\"fd\":3,\"path\":\"/d/q\\\"\\\\\\u0001.bin\","
        "\"offset\":0,\"len\":4096,\"ret\":10,\"site\":\"s\\\"ite\"}},\n"
        "{\"ph\":\"C\",\"name\":\"offset /d/q\\\"\\\\\\u0001.bin\",\"ts\":1234.567,"
        "\"pid\":100,\"args\":{\"offset\":0}}\n"
        "]}\n");
    free(out);
    assert_int_equal(st.written, 1);
    assert_int_equal(st.skip_filter, 1);
    free(p);
    free(other);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    struct ioh_export_opts o;
    ioh_export_opts_default(&o, IOH_EXPORT_CSV);
    char err[512];
    struct mem m;
    mem_open(&m);
    const char *missing[] = {"/nonexistent/ioh/trace.iohtrace"};
    assert_true(ioh_export_traces(&o, missing, 1, m.f, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, "/nonexistent/ioh/trace.iohtrace"));

    char tmp[] = "/tmp/ioh-export-test-XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not a trace, just text\n", 23), 23);
    close(fd);
    const char *notrace[] = {tmp};
    assert_true(ioh_export_traces(&o, notrace, 1, m.f, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, tmp));
    unlink(tmp);

    char dir[] = "/tmp/ioh-export-dir-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *empty[] = {dir};
    assert_true(ioh_export_traces(&o, empty, 1, m.f, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, "no .iohtrace files"));
    rmdir(dir);
    free(mem_close(&m));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_field),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_fio_name),
        cmocka_unit_test(test_format_parse),
        cmocka_unit_test(test_fio_v2),
        cmocka_unit_test(test_fio_timed_relocated),
        cmocka_unit_test(test_fio_stdio_model),
        cmocka_unit_test(test_csv_writer),
        cmocka_unit_test(test_perfetto_writer),
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
