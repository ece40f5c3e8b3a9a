/*
 * index_reader: seed 003, "Parallel I/O" (index-based MAF queries).
 *
 * The seed's fastest design: a pool of independent worker threads, each taking
 * the next group of blocks found through an index and reading and parsing them
 * itself. Here the index (from `gendata blocks`) lists every block of DATA as
 * "OFFSET LENGTH ID"; a query picks K of them at random (seeded) and returns
 * them in file order; N threads (-t 1, 2, 4, 8) claim --batch blocks at a time
 * and pread() each block, check its header ("#blk ID LEN") and hash it.
 *
 * The checksum combines the per-block hashes in query order, so it does not
 * depend on thread scheduling: the output is the same for every -t.
 *
 * usage: index_reader [-t N] [-k K|--all] [--seed S] [--batch B] [--own-fd] [-v] DATA INDEX
 */
#include "excommon.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct block {
	uint64_t off, len, id;
};

struct job {
	const char *path;
	int shared_fd;           /* -1 with --own-fd */
	const struct block *sel; /* the query's blocks, in file order */
	uint64_t nsel, batch;
	uint64_t *hashes;        /* hashes[i] for sel[i]; each slot written by one thread */
	atomic_uint_fast64_t next;
	atomic_uint_fast64_t bytes;
	atomic_int failed;
};

static struct block *load_index(const char *path, uint64_t *n_out)
{
	FILE *f = fopen(path, "r");
	struct block *v = NULL;
	uint64_t n = 0, cap = 0;
	unsigned long long off, len, id;
	int r;

	if (!f)
		ex_die_errno("cannot open index %s", path);
	while ((r = fscanf(f, "%llu %llu %llu", &off, &len, &id)) == 3) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				ex_die("out of memory");
		}
		v[n].off = off;
		v[n].len = len;
		v[n].id = id;
		n++;
	}
	if (r != EOF)
		ex_die("%s: malformed line after entry %" PRIu64, path, n);
	fclose(f);
	*n_out = n;
	return v;
}

/* Read and "parse" one block: the header must name the block the index
 * promised, and the payload must be as long as the header says. */
static int read_block(int fd, const struct block *b, char **buf, size_t *cap, uint64_t *hash)
{
	unsigned long long id, plen;
	ssize_t got;
	int hl;

	if (b->len > *cap) {
		free(*buf);
		*cap = b->len;
		*buf = malloc(*cap);
		if (!*buf)
			return -ENOMEM;
	}
	got = ex_pread_full(fd, *buf, b->len, (off_t)b->off);
	if (got < 0)
		return (int)got;
	if ((uint64_t)got != b->len)
		return -EIO;
	if (sscanf(*buf, "#blk %llu %llu\n%n", &id, &plen, &hl) != 2 || id != b->id ||
	    (uint64_t)hl + plen != b->len)
		return -EBADMSG;
	*hash = ex_hash_buf(*buf, b->len);
	return 0;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	int fd = j->shared_fd;
	char *buf = NULL;
	size_t cap = 0;

	if (fd < 0)
		fd = ex_open_ro(j->path);
	for (;;) {
		uint64_t first = atomic_fetch_add(&j->next, j->batch);
		if (first >= j->nsel || atomic_load(&j->failed))
			break;
		for (uint64_t i = first; i < first + j->batch && i < j->nsel; i++) {
			int err = read_block(fd, &j->sel[i], &buf, &cap, &j->hashes[i]);
			if (err) {
				fprintf(stderr, "index_reader: block %" PRIu64 " at %" PRIu64 ": %s\n",
					j->sel[i].id, j->sel[i].off, strerror(-err));
				atomic_store(&j->failed, 1);
				break;
			}
			atomic_fetch_add(&j->bytes, j->sel[i].len);
		}
	}
	if (j->shared_fd < 0)
		close(fd);
	free(buf);
	return NULL;
}

static int cmp_off(const void *a, const void *b)
{
	uint64_t x = ((const struct block *)a)->off, y = ((const struct block *)b)->off;
	return (x > y) - (x < y);
}

static void usage(FILE *f)
{
	fputs("usage: index_reader [-t THREADS] [-k K | --all] [--seed S] [--batch B] [--own-fd] [-v]\n"
	      "                    DATA INDEX\n"
	      "Reads K random blocks (default 10000, like the seed's 10,000 intervals) found\n"
	      "through INDEX with THREADS workers (default 1); prints blocks, bytes, checksum.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"threads", required_argument, NULL, 't'},
		{"k", required_argument, NULL, 'k'},
		{"all", no_argument, NULL, 'a'},
		{"seed", required_argument, NULL, 's'},
		{"batch", required_argument, NULL, 'B'},
		{"own-fd", no_argument, NULL, 'o'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t k = 10000, seed = 1, nblocks, threads = 1;
	int all = 0, own_fd = 0, verbose = 0, c;
	struct block *idx;
	pthread_t *tids;
	struct job j;
	struct ex_rng r;
	struct ex_hash h;
	double t0;

	ex_set_prog(argv[0]);
	memset(&j, 0, sizeof(j));
	j.batch = 4;
	while ((c = getopt_long(argc, argv, "t:k:as:B:ovh", lo, NULL)) != -1) {
		switch (c) {
		case 't': threads = ex_parse_u64("--threads", optarg); break;
		case 'k': k = ex_parse_u64("--k", optarg); break;
		case 'a': all = 1; break;
		case 's': seed = ex_parse_u64("--seed", optarg); break;
		case 'B': j.batch = ex_parse_u64("--batch", optarg); break;
		case 'o': own_fd = 1; break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 2 != argc) {
		usage(stderr);
		return 2;
	}
	if (threads < 1 || threads > 256)
		ex_die("--threads must be 1..256");
	if (j.batch < 1)
		ex_die("--batch must be >= 1");

	idx = load_index(argv[optind + 1], &nblocks);
	if (all || k > nblocks)
		k = nblocks;
	/* partial Fisher-Yates picks the query's blocks; then file order */
	ex_rng_seed(&r, seed);
	for (uint64_t i = 0; i < k; i++) {
		uint64_t x = i + ex_rng_below(&r, nblocks - i);
		struct block t = idx[i];
		idx[i] = idx[x];
		idx[x] = t;
	}
	qsort(idx, k, sizeof(*idx), cmp_off);

	j.path = argv[optind];
	j.sel = idx;
	j.nsel = k;
	j.hashes = calloc(k ? k : 1, sizeof(*j.hashes));
	tids = calloc(threads, sizeof(*tids));
	if (!j.hashes || !tids)
		ex_die("out of memory");
	atomic_init(&j.next, 0);
	atomic_init(&j.bytes, 0);
	atomic_init(&j.failed, 0);
	t0 = ex_now();
	j.shared_fd = own_fd ? -1 : ex_open_ro(j.path);
	for (uint64_t i = 0; i < threads; i++) {
		int err = pthread_create(&tids[i], NULL, worker, &j);
		if (err)
			ex_die("pthread_create: %s", strerror(err));
	}
	for (uint64_t i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (j.shared_fd >= 0)
		close(j.shared_fd);
	if (atomic_load(&j.failed))
		ex_die("failed (see above)");

	ex_hash_init(&h);
	for (uint64_t i = 0; i < k; i++)
		ex_hash_u64(&h, j.hashes[i]);
	printf("blocks %" PRIu64 "\nbytes %" PRIu64 "\nchecksum %016" PRIx64 "\n", k,
	       (uint64_t)atomic_load(&j.bytes), ex_hash_final(&h));
	if (verbose)
		fprintf(stderr, "index_reader: threads=%" PRIu64 " %.3f s\n", threads, ex_now() - t0);
	free(j.hashes);
	free(tids);
	free(idx);
	return 0;
}
