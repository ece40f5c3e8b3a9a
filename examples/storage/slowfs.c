/*
 * slowfs: a read-only FUSE passthrough that makes fast storage behave like a
 * hard disk or a network file system.
 *
 * It mirrors SRC at MNT and serves every read request with the real bytes from
 * SRC, then holds the reply back by a modelled latency and bandwidth:
 *
 *   latency   each read request waits --delay-us (or a uniform draw in MIN-MAX);
 *             a request that starts exactly where a recent request on the same
 *             open file ended is "sequential" and waits --seq-delay-us
 *   bandwidth the bytes of all requests flow through one pipe of --bw-mbps MB/s
 *             (10^6 bytes/s); a request completes when its bytes have passed
 *   queue     at most --queue-depth requests are serviced at once (0: as many as
 *             FUSE has worker threads, -o max_threads=N, default 10)
 *
 * Presets (explicit options override them):
 *   hdd   random 4000-8000 us, sequential 100 us, 150 MB/s, queue depth 1
 *   net   1250 us per request (seed 001's LAN), 117 MB/s (1 GbE), unlimited queue
 *   none  no delay: a plain passthrough (the default)
 *
 * What the kernel sends is what the application's reads become after the page
 * cache: read-ahead (--readahead, default 128 KiB, the most the kernel allows
 * unless the bdi's read_ahead_kb is raised; slowfs.sh --ra-kb does that) and the
 * request size cap (--max-read, default 128 KiB). --direct-io bypasses the page
 * cache, so every read() of the application is one request. With --keep-cache
 * (the default) cached pages survive close/open like on a local disk; evict them
 * with posix_fadvise(DONTNEED) or drop_caches.
 *
 * Counters (requests, bytes, sequential/random, modelled latency, added delay,
 * request sizes) are reported on SIGUSR1 and at unmount to stderr and to the
 * --stats FILE, and can be read at any time from MNT/.slowfs-stats (a virtual
 * file, not listed by readdir). SIGUSR2 resets them.
 *
 * Threading: FUSE calls the handlers from several worker threads. All mutable
 * state is in `g` below and guarded by g.lock, except the per-open request
 * history, guarded by its own lock. The signal thread only takes g.lock.
 */
#define FUSE_USE_VERSION 312

#include "excommon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define STATS_NAME "/.slowfs-stats"
#define NSIZES 10 /* request size buckets: <=4K, 8K, ..., 1M, >1M */

struct sfs_model {
	unsigned rand_min_us, rand_max_us; /* latency of a random request */
	unsigned seq_us;                   /* latency of a sequential request */
	double bw_mbps;                    /* MB/s (10^6 B/s); 0: unlimited */
	unsigned queue_depth;              /* 0: unlimited */
};

struct sfs_stats {
	uint64_t opens, requests, bytes, seq, rnd, errors;
	uint64_t latency_ns; /* sum of modelled latencies */
	uint64_t delay_ns;   /* sum of time added beyond the real pread */
	uint64_t service_ns; /* sum of whole request handling time */
	uint64_t sizes[NSIZES];
	unsigned inflight, max_inflight;
	double since; /* ex_now() at the last reset */
};

/* The one process-wide state. Fields above `lock` are set before fuse_main()
 * and read-only afterwards; fields below are guarded by `lock`. */
static struct {
	const char *src;
	int srcfd;
	const char *preset;
	struct sfs_model m;
	unsigned max_read, max_readahead;
	int keep_cache, direct_io, nonseekable;
	const char *stats_path;

	pthread_mutex_t lock;
	pthread_cond_t qd_cond;
	unsigned qd_busy;
	struct ex_rng rng;
	struct timespec link_free; /* when the bandwidth pipe is next free */
	struct sfs_stats st;
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.qd_cond = PTHREAD_COND_INITIALIZER,
};

#define NRECENT 8 /* requests remembered per open file for sequential detection */

struct sfs_file {
	int fd;          /* -1 for the stats file */
	char *text;      /* stats snapshot, for the stats file */
	size_t text_len;
	pthread_mutex_t lock;                     /* guards the fields below */
	uint64_t recent_start[NRECENT], recent_end[NRECENT];
	unsigned nrecent, next_slot;
};

/*
 * Sequential: the request starts exactly where one of the last NRECENT requests
 * on this open file ended, or ends exactly where one of them started. The second
 * case and the ring (rather than only the previous request) absorb the
 * reordering of concurrent read-ahead requests on their way through FUSE's
 * worker threads, and several threads streaming through one descriptor.
 */
static int classify_seq(struct sfs_file *f, uint64_t off, uint64_t len)
{
	int seq = 0;
	pthread_mutex_lock(&f->lock);
	for (unsigned i = 0; i < f->nrecent && !seq; i++)
		seq = f->recent_end[i] == off || f->recent_start[i] == off + len;
	f->recent_start[f->next_slot] = off;
	f->recent_end[f->next_slot] = off + len;
	f->next_slot = (f->next_slot + 1) % NRECENT;
	if (f->nrecent < NRECENT)
		f->nrecent++;
	pthread_mutex_unlock(&f->lock);
	return seq;
}

/* ---- time ---------------------------------------------------------------- */

static struct timespec ts_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

static struct timespec ts_add_ns(struct timespec t, uint64_t ns)
{
	t.tv_sec += (time_t)(ns / 1000000000u);
	t.tv_nsec += (long)(ns % 1000000000u);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static int ts_before(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

static int64_t ts_diff_ns(struct timespec a, struct timespec b)
{
	return (int64_t)(a.tv_sec - b.tv_sec) * 1000000000 + (a.tv_nsec - b.tv_nsec);
}

static void sleep_until(struct timespec t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* ---- stats --------------------------------------------------------------- */

static void append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* snprintf at buf + *n; on truncation the text just stops at cap - 1. */
static void append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int w;
	if (*n + 1 >= cap)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n += (size_t)w < cap - *n ? (size_t)w : cap - *n - 1;
}

/* Render the counters as "key value" lines. Caller holds g.lock. */
static size_t stats_format_locked(char *buf, size_t cap)
{
	static const char *const size_names[NSIZES] = {
		"size_le_4k",   "size_le_8k",   "size_le_16k", "size_le_32k", "size_le_64k",
		"size_le_128k", "size_le_256k", "size_le_512k", "size_le_1m", "size_gt_1m",
	};
	const struct sfs_stats *s = &g.st;
	size_t n = 0;

	append(buf, cap, &n, "# slowfs stats\n");
	append(buf, cap, &n, "source %s\n", g.src);
	append(buf, cap, &n, "preset %s\n", g.preset);
	append(buf, cap, &n, "rand_delay_us %u-%u\n", g.m.rand_min_us, g.m.rand_max_us);
	append(buf, cap, &n, "seq_delay_us %u\n", g.m.seq_us);
	append(buf, cap, &n, "bw_mbps %g\n", g.m.bw_mbps);
	append(buf, cap, &n, "queue_depth %u\n", g.m.queue_depth);
	append(buf, cap, &n, "max_read %u\n", g.max_read);
	append(buf, cap, &n, "max_readahead %u\n", g.max_readahead);
	append(buf, cap, &n, "keep_cache %d\n", g.keep_cache);
	append(buf, cap, &n, "direct_io %d\n", g.direct_io);
	append(buf, cap, &n, "elapsed_s %.3f\n", ex_now() - s->since);
	append(buf, cap, &n, "opens %" PRIu64 "\n", s->opens);
	append(buf, cap, &n, "requests %" PRIu64 "\n", s->requests);
	append(buf, cap, &n, "bytes %" PRIu64 "\n", s->bytes);
	append(buf, cap, &n, "sequential %" PRIu64 "\n", s->seq);
	append(buf, cap, &n, "random %" PRIu64 "\n", s->rnd);
	append(buf, cap, &n, "errors %" PRIu64 "\n", s->errors);
	append(buf, cap, &n, "latency_us %" PRIu64 "\n", s->latency_ns / 1000);
	append(buf, cap, &n, "delay_us %" PRIu64 "\n", s->delay_ns / 1000);
	append(buf, cap, &n, "service_us %" PRIu64 "\n", s->service_ns / 1000);
	append(buf, cap, &n, "avg_request_bytes %" PRIu64 "\n", s->requests ? s->bytes / s->requests : 0);
	append(buf, cap, &n, "max_inflight %u\n", s->max_inflight);
	for (int i = 0; i < NSIZES; i++)
		append(buf, cap, &n, "%s %" PRIu64 "\n", size_names[i], s->sizes[i]);
	return n;
}

/* Report to stderr and the stats file; called from the signal thread and at
 * unmount, never from a request handler. */
static void stats_report(const char *why)
{
	char buf[4096];
	size_t n;

	pthread_mutex_lock(&g.lock);
	n = stats_format_locked(buf, sizeof(buf));
	pthread_mutex_unlock(&g.lock);
	fprintf(stderr, "slowfs: stats (%s):\n%.*s", why, (int)n, buf);
	fflush(stderr);
	if (g.stats_path) {
		char tmp[PATH_MAX];
		FILE *f;
		snprintf(tmp, sizeof(tmp), "%s.tmp", g.stats_path);
		f = fopen(tmp, "w");
		if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0 || rename(tmp, g.stats_path) != 0)
			fprintf(stderr, "slowfs: cannot write %s: %s\n", g.stats_path, strerror(errno));
	}
}

static void stats_reset(void)
{
	pthread_mutex_lock(&g.lock);
	unsigned inflight = g.st.inflight;
	memset(&g.st, 0, sizeof(g.st));
	g.st.inflight = inflight;
	g.st.since = ex_now();
	pthread_mutex_unlock(&g.lock);
}

static void *signal_thread(void *arg)
{
	sigset_t *set = arg;
	for (;;) {
		int sig;
		if (sigwait(set, &sig) != 0)
			continue;
		if (sig == SIGUSR1) {
			stats_report("SIGUSR1");
		} else if (sig == SIGUSR2) {
			stats_reset();
			fprintf(stderr, "slowfs: stats reset (SIGUSR2)\n");
		}
	}
	return NULL;
}

/* ---- helpers ------------------------------------------------------------- */

/* FUSE paths are absolute within the mount; SRC-relative for the *at calls. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int size_bucket(size_t n)
{
	int b = 0;
	size_t lim = 4096;
	while (b < NSIZES - 1 && n > lim) {
		lim <<= 1;
		b++;
	}
	return b;
}

/* ---- operations ---------------------------------------------------------- */

static void *sfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* The mirror is read-only and SRC must not change under it: let the kernel
	 * cache names and attributes for long. */
	cfg->use_ino = 1;
	cfg->entry_timeout = 3600;
	cfg->attr_timeout = 3600;
	cfg->negative_timeout = 60;
	unsigned offered_ra = conn->max_readahead;
	conn->max_read = g.max_read;
	conn->max_readahead = g.max_readahead;
	fprintf(stderr,
		"slowfs: serving %s: preset=%s rand_delay_us=%u-%u seq_delay_us=%u bw_mbps=%g "
		"queue_depth=%u max_read=%u max_readahead=%u (kernel offered %u) keep_cache=%d "
		"direct_io=%d async_read=%d\n",
		g.src, g.preset, g.m.rand_min_us, g.m.rand_max_us, g.m.seq_us, g.m.bw_mbps,
		g.m.queue_depth, conn->max_read, conn->max_readahead, offered_ra, g.keep_cache,
		g.direct_io, (conn->want & FUSE_CAP_ASYNC_READ) != 0);
	fflush(stderr);
	return NULL;
}

static void sfs_destroy(void *private_data)
{
	(void)private_data;
	stats_report("unmount");
}

static int sfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, STATS_NAME) == 0) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096; /* an upper bound; reads return the real length */
		st->st_ino = 1;
		return 0;
	}
	if (fstatat(g.srcfd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

static int sfs_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n;
	if (size == 0)
		return -EINVAL;
	n = readlinkat(g.srcfd, rel(path), buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int sfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	int fd = openat(g.srcfd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	(void)off;
	(void)fi;
	(void)flags;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int err = errno;
		close(fd);
		return -err;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		memset(&st, 0, sizeof(st));
		st.st_ino = de->d_ino;
		st.st_mode = (mode_t)DTTOIF(de->d_type);
		if (filler(buf, de->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
	return 0;
}

static int sfs_open(const char *path, struct fuse_file_info *fi)
{
	struct sfs_file *f;

	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	if (strcmp(path, STATS_NAME) == 0) {
		f->fd = -1;
		f->text = malloc(4096);
		if (!f->text) {
			free(f);
			return -ENOMEM;
		}
		pthread_mutex_lock(&g.lock);
		f->text_len = stats_format_locked(f->text, 4096);
		pthread_mutex_unlock(&g.lock);
		fi->direct_io = 1; /* always this snapshot, never cached pages */
	} else {
		f->fd = openat(g.srcfd, rel(path), O_RDONLY | O_CLOEXEC);
		if (f->fd < 0) {
			int err = errno;
			free(f);
			return -err;
		}
		fi->keep_cache = g.keep_cache;
		fi->direct_io = g.direct_io;
		fi->nonseekable = g.nonseekable;
		pthread_mutex_lock(&g.lock);
		g.st.opens++;
		pthread_mutex_unlock(&g.lock);
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	return 0;
}

static int sfs_release(const char *path, struct fuse_file_info *fi)
{
	struct sfs_file *f = (struct sfs_file *)(uintptr_t)fi->fh;
	(void)path;
	if (f->fd >= 0)
		close(f->fd);
	pthread_mutex_destroy(&f->lock);
	free(f->text);
	free(f);
	return 0;
}

/* Modelled latency of one request, in ns. Caller holds g.lock (for the rng). */
static uint64_t draw_latency_ns_locked(int seq)
{
	if (seq)
		return (uint64_t)g.m.seq_us * 1000;
	if (g.m.rand_max_us > g.m.rand_min_us)
		return ex_rng_range(&g.rng, (uint64_t)g.m.rand_min_us * 1000,
				    (uint64_t)g.m.rand_max_us * 1000);
	return (uint64_t)g.m.rand_min_us * 1000;
}

static int sfs_read(const char *path, char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	static _Thread_local int slack_set;
	struct sfs_file *f = (struct sfs_file *)(uintptr_t)fi->fh;
	struct timespec t0, ts, tr, deadline, t1;
	uint64_t lat_ns;
	ssize_t n;
	int seq;

	(void)path;
	if (f->fd < 0) { /* the stats file */
		if ((size_t)off >= f->text_len)
			return 0;
		if (size > f->text_len - (size_t)off)
			size = f->text_len - (size_t)off;
		memcpy(buf, f->text + off, size);
		return (int)size;
	}
	if (!slack_set) {
		/* The default 50 us timer slack would blur 100 us delays. */
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		slack_set = 1;
	}

	t0 = ts_now();
	seq = classify_seq(f, (uint64_t)off, size);

	pthread_mutex_lock(&g.lock);
	if (g.m.queue_depth)
		while (g.qd_busy >= g.m.queue_depth)
			pthread_cond_wait(&g.qd_cond, &g.lock);
	g.qd_busy++;
	if (++g.st.inflight > g.st.max_inflight)
		g.st.max_inflight = g.st.inflight;
	lat_ns = draw_latency_ns_locked(seq);
	pthread_mutex_unlock(&g.lock);

	ts = ts_now(); /* service starts: the latency runs from here */
	n = ex_pread_full(f->fd, buf, size, off);
	tr = ts_now();
	deadline = ts_add_ns(ts, lat_ns);
	if (ts_before(deadline, tr))
		deadline = tr; /* the real read took longer than the model */

	pthread_mutex_lock(&g.lock);
	if (g.m.bw_mbps > 0 && n > 0) {
		/* Bytes pass the shared pipe one request after the other. */
		uint64_t xfer_ns = (uint64_t)((double)n * 1000.0 / g.m.bw_mbps);
		struct timespec start = ts_before(g.link_free, deadline) ? deadline : g.link_free;
		g.link_free = ts_add_ns(start, xfer_ns);
		deadline = g.link_free;
	}
	pthread_mutex_unlock(&g.lock);

	sleep_until(deadline);
	t1 = ts_now();

	pthread_mutex_lock(&g.lock);
	g.qd_busy--;
	g.st.inflight--;
	pthread_cond_signal(&g.qd_cond);
	g.st.requests++;
	if (n < 0) {
		g.st.errors++;
	} else {
		g.st.bytes += (uint64_t)n;
		g.st.sizes[size_bucket(size)]++;
	}
	if (seq)
		g.st.seq++;
	else
		g.st.rnd++;
	g.st.latency_ns += lat_ns;
	g.st.delay_ns += (uint64_t)(ts_diff_ns(t1, t0) - ts_diff_ns(tr, ts));
	g.st.service_ns += (uint64_t)ts_diff_ns(t1, t0);
	pthread_mutex_unlock(&g.lock);

	return (int)n;
}

static int sfs_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	if (fstatvfs(g.srcfd, sv) < 0)
		return -errno;
	return 0;
}

static const struct fuse_operations sfs_ops = {
	.init = sfs_init,
	.destroy = sfs_destroy,
	.getattr = sfs_getattr,
	.readlink = sfs_readlink,
	.readdir = sfs_readdir,
	.open = sfs_open,
	.read = sfs_read,
	.release = sfs_release,
	.statfs = sfs_statfs,
};

/* ---- command line -------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("usage: slowfs [options] SRC MNT [-f] [-d] [-s] [-o FUSE_OPTION,...]\n"
	      "Mirrors SRC read-only at MNT, delaying each read request.\n"
	      "  --preset none|hdd|net  hdd: 4000-8000 us random, 100 us sequential, 150 MB/s,\n"
	      "                         queue depth 1; net: 1250 us, 117 MB/s; none (default)\n"
	      "  --delay-us N|MIN-MAX   latency of a random request (and of a sequential one\n"
	      "                         unless --seq-delay-us is given)\n"
	      "  --seq-delay-us N       latency of a request continuing the previous one\n"
	      "  --bw-mbps X            bandwidth cap in MB/s (10^6 B/s), 0 = none\n"
	      "  --queue-depth N        requests serviced at once, 0 = unlimited\n"
	      "  --max-read BYTES       largest read request (default 128K; -o max_read)\n"
	      "  --readahead BYTES      FUSE max_readahead (default 128K; the kernel also caps\n"
	      "                         it at the bdi read_ahead_kb, see slowfs.sh --ra-kb)\n"
	      "  --no-keep-cache        drop the file's page cache at each open\n"
	      "  --direct-io            bypass the page cache: one request per read()\n"
	      "  --nonseekable          open files non-seekable (FOPEN_NONSEEKABLE: lseek\n"
	      "                         and pread fail with ESPIPE; read goes on)\n"
	      "  --stats FILE           write the counters here on SIGUSR1 and at unmount\n"
	      "  --seed N               seed of the latency draws (default 1)\n"
	      "Counters: MNT/.slowfs-stats, SIGUSR1 (report), SIGUSR2 (reset).\n"
	      "slowfs always runs in the foreground (-f is implied): start it in the\n"
	      "background and stop it with fusermount3 -u MNT, or use slowfs.sh.\n",
	      f);
}

static void parse_delay(const char *s, unsigned *lo, unsigned *hi)
{
	const char *dash = strchr(s, '-');
	if (dash) {
		char a[32];
		size_t l = (size_t)(dash - s);
		if (l == 0 || l >= sizeof(a))
			ex_die("--delay-us: expected N or MIN-MAX, got '%s'", s);
		memcpy(a, s, l);
		a[l] = '\0';
		*lo = (unsigned)ex_parse_u64("--delay-us", a);
		*hi = (unsigned)ex_parse_u64("--delay-us", dash + 1);
		if (*hi < *lo)
			ex_die("--delay-us: MIN-MAX with MAX < MIN");
	} else {
		*lo = *hi = (unsigned)ex_parse_u64("--delay-us", s);
	}
}

static void apply_preset(const char *name)
{
	struct sfs_model m = {0, 0, 0, 0, 0};
	if (strcmp(name, "hdd") == 0) {
		m = (struct sfs_model){4000, 8000, 100, 150, 1};
	} else if (strcmp(name, "net") == 0) {
		m = (struct sfs_model){1250, 1250, 1250, 117, 0};
	} else if (strcmp(name, "none") != 0) {
		ex_die("unknown --preset '%s' (none, hdd, net)", name);
	}
	g.m = m;
	g.preset = name;
}

/* Takes "--opt VALUE" and "--opt=VALUE"; returns the value or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t l = strlen(name);
	if (strncmp(argv[*i], name, l) != 0)
		return NULL;
	if (argv[*i][l] == '=')
		return argv[*i] + l + 1;
	if (argv[*i][l] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		ex_die("%s needs a value", name);
	return argv[++*i];
}

int main(int argc, char **argv)
{
	const char *preset = "none", *delay = NULL, *seq_delay = NULL, *bw = NULL, *qd = NULL;
	const char *positional[2] = {NULL, NULL};
	char optbuf[256];
	char **fargv = calloc((size_t)argc + 10, sizeof(char *));
	int fargc = 0, npos = 0, ret;
	uint64_t seed = 1;
	static sigset_t sigs;
	pthread_t sigtid;
	struct stat st;
	char *abs_src;

	ex_set_prog("slowfs");
	if (!fargv)
		ex_die("out of memory");
	g.max_read = 131072;
	g.max_readahead = 131072;
	g.keep_cache = 1;
	fargv[fargc++] = argv[0];
	/* An explicit default: libfuse 3.14 warns about its own unset value
	 * (libfuse issue #1003).
	 * A later -o max_idle_threads=N on the command line overrides it. */
	fargv[fargc++] = "-o";
	fargv[fargc++] = "max_idle_threads=10";
	for (int i = 1; i < argc; i++) {
		const char *v;
		if ((v = opt_value(argc, argv, &i, "--preset")))
			preset = v;
		else if ((v = opt_value(argc, argv, &i, "--delay-us")))
			delay = v;
		else if ((v = opt_value(argc, argv, &i, "--seq-delay-us")))
			seq_delay = v;
		else if ((v = opt_value(argc, argv, &i, "--bw-mbps")))
			bw = v;
		else if ((v = opt_value(argc, argv, &i, "--queue-depth")))
			qd = v;
		else if ((v = opt_value(argc, argv, &i, "--max-read")))
			g.max_read = (unsigned)ex_parse_size("--max-read", v);
		else if ((v = opt_value(argc, argv, &i, "--readahead")))
			g.max_readahead = (unsigned)ex_parse_size("--readahead", v);
		else if ((v = opt_value(argc, argv, &i, "--stats")))
			g.stats_path = v;
		else if ((v = opt_value(argc, argv, &i, "--seed")))
			seed = ex_parse_u64("--seed", v);
		else if (strcmp(argv[i], "--keep-cache") == 0)
			g.keep_cache = 1;
		else if (strcmp(argv[i], "--no-keep-cache") == 0)
			g.keep_cache = 0;
		else if (strcmp(argv[i], "--direct-io") == 0)
			g.direct_io = 1;
		else if (strcmp(argv[i], "--nonseekable") == 0)
			g.nonseekable = 1;
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "-o") == 0) {
			if (i + 1 >= argc)
				ex_die("-o needs a value");
			fargv[fargc++] = argv[i++];
			fargv[fargc++] = argv[i];
		} else if (argv[i][0] == '-') {
			fargv[fargc++] = argv[i]; /* -f, -d, -s, -oX: FUSE's own */
		} else if (npos < 2) {
			positional[npos++] = argv[i];
		} else {
			ex_die("unexpected argument '%s'", argv[i]);
		}
	}
	if (npos != 2) {
		usage(stderr);
		return 2;
	}
	apply_preset(preset);
	if (delay) {
		parse_delay(delay, &g.m.rand_min_us, &g.m.rand_max_us);
		if (!seq_delay)
			g.m.seq_us = g.m.rand_min_us;
	}
	if (seq_delay)
		g.m.seq_us = (unsigned)ex_parse_u64("--seq-delay-us", seq_delay);
	if (bw) {
		g.m.bw_mbps = ex_parse_double("--bw-mbps", bw);
		if (g.m.bw_mbps < 0)
			ex_die("--bw-mbps must be >= 0");
	}
	if (qd)
		g.m.queue_depth = (unsigned)ex_parse_u64("--queue-depth", qd);
	if (g.max_read < 4096 || g.max_readahead > (1u << 30))
		ex_die("--max-read must be >= 4096 and --readahead <= 1G");
	if (delay || seq_delay || bw || qd) {
		static char label[64];
		snprintf(label, sizeof(label), "%s+custom", g.preset);
		g.preset = label;
	}

	abs_src = realpath(positional[0], NULL);
	if (!abs_src || stat(abs_src, &st) < 0 || !S_ISDIR(st.st_mode))
		ex_die("SRC '%s' is not a directory", positional[0]);
	g.src = abs_src;
	g.srcfd = open(abs_src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g.srcfd < 0)
		ex_die_errno("cannot open %s", abs_src);
	if (g.stats_path && g.stats_path[0] != '/') {
		/* FUSE may chdir("/") when daemonizing: keep the path absolute. */
		char *cwd = getcwd(NULL, 0);
		char *p = malloc(strlen(cwd ? cwd : ".") + strlen(g.stats_path) + 2);
		if (!cwd || !p)
			ex_die("cannot resolve --stats path");
		sprintf(p, "%s/%s", cwd, g.stats_path);
		g.stats_path = p;
		free(cwd);
	}
	ex_rng_seed(&g.rng, seed);
	g.st.since = ex_now();

	/* max_read must be given both as a mount option and in init() (fuse_common.h).
	 * Always -f: the signal thread would not survive FUSE's daemonizing fork. */
	snprintf(optbuf, sizeof(optbuf), "ro,fsname=slowfs,subtype=slowfs,max_read=%u", g.max_read);
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-o";
	fargv[fargc++] = optbuf;
	fargv[fargc++] = (char *)positional[1];
	fargv[fargc] = NULL;

	/* Block the report signals everywhere; one thread takes them with sigwait.
	 * FUSE's worker threads inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (pthread_create(&sigtid, NULL, signal_thread, &sigs) != 0)
		ex_die("cannot start the signal thread");
	pthread_detach(sigtid);

	ret = fuse_main(fargc, fargv, &sfs_ops, NULL);
	free(fargv);
	return ret;
}
