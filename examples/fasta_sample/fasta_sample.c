/*
 * fasta_sample: seed 000, "On Random vs. Streaming I/O Performance".
 *
 * Samples k records of a FASTA file two ways, as in the seed:
 *   --method seek       draw k random byte offsets, sort them, and for each one
 *                       lseek() there, read forward (--bs bytes per read(),
 *                       default 1 KiB) to the next record and read that record;
 *                       records drawn twice are replaced in further rounds.
 *                       Wins when k is a tiny fraction of the file (IOPS-bound).
 *   --method reservoir  stream the whole file with read() (--bs, default 64 KiB)
 *                       and keep a uniform sample with reservoir sampling
 *                       (Algorithm R). Wins above ~1% (bandwidth-bound).
 * k is --k K, or --fraction F --records N (F as 0.001 or 0.1%; N = records in
 * the file, which gen-data.sh stores in FILE.nrec). Output is deterministic for
 * a given file, method, k and --seed: the XXH64 of the sampled records' hashes
 * in file order, whatever storage or policy served the reads.
 *
 * A record is the bytes from its '>' (at the start of a line) up to the next
 * record's '>' or EOF; the same record gets the same hash under both methods.
 * An offset inside the last record wraps around to the first record, so every
 * record can be drawn (a record's chance is proportional to the length of the
 * record before it, the seed's bias).
 */
#include "excommon.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONE UINT64_MAX

struct sample {
	uint64_t start;
	uint64_t hash;
};

/* A one-buffer window over the file, refilled with one read() per load. The
 * descriptor's offset is tracked so that continuing where the last read ended
 * costs no lseek -- what a simple C program would do. */
struct win {
	int fd;
	char *buf;
	size_t cap, len;
	uint64_t off;    /* file offset of buf[0] */
	uint64_t fdpos;  /* the descriptor's file offset */
	uint64_t reads, seeks;
};

static void win_load(struct win *w, uint64_t pos)
{
	ssize_t n;
	if (w->fdpos != pos) {
		if (lseek(w->fd, (off_t)pos, SEEK_SET) < 0)
			ex_die_errno("lseek");
		w->seeks++;
	}
	do
		n = read(w->fd, w->buf, w->cap);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		ex_die_errno("read");
	w->reads++;
	w->off = pos;
	w->len = (size_t)n;
	w->fdpos = pos + (uint64_t)n;
}

/* Make pos readable; false at EOF. */
static int win_ensure(struct win *w, uint64_t pos)
{
	if (pos >= w->off && pos < w->off + w->len)
		return 1;
	win_load(w, pos);
	return w->len > 0;
}

/*
 * Walk forward from pos (prev = the byte before pos, '\n' at the file start)
 * to the next record start, feeding the bytes passed over into h if non-NULL.
 * Returns the start's offset, or NONE at EOF.
 */
static uint64_t win_next_start(struct win *w, uint64_t pos, int prev, struct ex_hash *h)
{
	for (;;) {
		const char *b, *q;
		size_t avail;
		if (!win_ensure(w, pos))
			return NONE;
		b = w->buf + (pos - w->off);
		avail = w->len - (size_t)(pos - w->off);
		q = memchr(b, '>', avail);
		while (q) {
			int pc = q == b ? prev : q[-1];
			if (pc == '\n') {
				if (h)
					ex_hash_update(h, b, (size_t)(q - b));
				return pos + (uint64_t)(q - b);
			}
			q = memchr(q + 1, '>', avail - (size_t)(q + 1 - b));
		}
		if (h)
			ex_hash_update(h, b, avail);
		prev = (unsigned char)b[avail - 1];
		pos += avail;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_sample(const void *a, const void *b)
{
	return cmp_u64(&((const struct sample *)a)->start, &((const struct sample *)b)->start);
}

/* Open-addressing set of record starts (the seed's recordsdict). */
struct set {
	uint64_t *slot;
	uint64_t mask;
};

static void set_init(struct set *s, uint64_t k)
{
	uint64_t cap = 16;
	while (cap < 2 * k + 2)
		cap <<= 1;
	s->slot = malloc(cap * sizeof(*s->slot));
	if (!s->slot)
		ex_die("out of memory");
	memset(s->slot, 0xff, cap * sizeof(*s->slot));
	s->mask = cap - 1;
}

/* Insert; false if already present. */
static int set_add(struct set *s, uint64_t key)
{
	uint64_t i = ex_mix64(key) & s->mask;
	while (s->slot[i] != NONE) {
		if (s->slot[i] == key)
			return 0;
		i = (i + 1) & s->mask;
	}
	s->slot[i] = key;
	return 1;
}

static uint64_t sample_seek(int fd, uint64_t fsize, uint64_t k, size_t bs, struct ex_rng *r,
			    struct sample *out, uint64_t *rounds_out, struct win *w)
{
	uint64_t got = 0, rounds = 0;
	uint64_t *locs = malloc((k ? k : 1) * sizeof(*locs));
	struct set seen;

	if (!locs)
		ex_die("out of memory");
	set_init(&seen, k);
	w->fd = fd;
	w->cap = bs;
	w->buf = malloc(bs);
	w->len = 0;
	w->off = 0;
	w->fdpos = 0;
	if (!w->buf)
		ex_die("out of memory");
	while (got < k && fsize > 0) {
		uint64_t need = k - got;
		if (++rounds > 100000)
			ex_die("seek: no progress after %" PRIu64 " rounds (k larger than the records?)",
			       rounds - 1);
		for (uint64_t i = 0; i < need; i++)
			locs[i] = ex_rng_below(r, fsize);
		qsort(locs, need, sizeof(*locs), cmp_u64);
		for (uint64_t i = 0; i < need && got < k; i++) {
			uint64_t o = locs[i], start, end;
			int prev = '\n';
			struct ex_hash h;
			if (o > 0) {
				if (!win_ensure(w, o - 1))
					continue;
				prev = (unsigned char)w->buf[o - 1 - w->off];
			}
			start = win_next_start(w, o, prev, NULL);
			/* Past the last record's start: wrap around to the first record,
			 * so that every record can be drawn (the file is a ring). */
			if (start == NONE)
				start = win_next_start(w, 0, '\n', NULL);
			if (start == NONE || !set_add(&seen, start))
				continue;
			ex_hash_init(&h);
			ex_hash_update(&h, ">", 1);
			end = win_next_start(w, start + 1, '>', &h);
			(void)end;
			out[got].start = start;
			out[got].hash = ex_hash_final(&h);
			got++;
		}
	}
	free(locs);
	free(seen.slot);
	free(w->buf);
	*rounds_out = rounds;
	return got;
}

static uint64_t sample_reservoir(int fd, uint64_t k, size_t bs, struct ex_rng *r,
				 struct sample *out, uint64_t *records_out, uint64_t *reads_out)
{
	char *buf = malloc(bs);
	uint64_t pos = 0, nrec = 0, reads = 0;
	int64_t slot = -1;     /* reservoir slot of the current record, -1 if not kept */
	uint64_t cur_start = 0;
	int prev = '\n';
	struct ex_hash h;
	ssize_t n;

	if (!buf)
		ex_die("out of memory");
	while ((n = read(fd, buf, bs)) != 0) {
		const char *b = buf, *end, *q;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ex_die_errno("read");
		}
		reads++;
		end = buf + n;
		while (b < end) {
			q = memchr(b, '>', (size_t)(end - b));
			while (q && (q == buf ? prev : q[-1]) != '\n')
				q = memchr(q + 1, '>', (size_t)(end - q - 1));
			if (!q) {
				if (slot >= 0)
					ex_hash_update(&h, b, (size_t)(end - b));
				break;
			}
			if (slot >= 0) {
				ex_hash_update(&h, b, (size_t)(q - b));
				out[slot].start = cur_start;
				out[slot].hash = ex_hash_final(&h);
			}
			/* a new record begins at q: Algorithm R decides now */
			if (nrec < k) {
				slot = (int64_t)nrec;
			} else {
				uint64_t j = ex_rng_below(r, nrec + 1);
				slot = j < k ? (int64_t)j : -1;
			}
			nrec++;
			cur_start = pos + (uint64_t)(q - buf);
			if (slot >= 0)
				ex_hash_init(&h);
			b = q;
			if (slot >= 0)
				ex_hash_update(&h, b, 1);
			b++;
		}
		prev = (unsigned char)buf[n - 1];
		pos += (uint64_t)n;
	}
	if (slot >= 0) {
		out[slot].start = cur_start;
		out[slot].hash = ex_hash_final(&h);
	}
	free(buf);
	*records_out = nrec;
	*reads_out = reads;
	return nrec < k ? nrec : k;
}

static void usage(FILE *f)
{
	fputs("usage: fasta_sample [--method seek|reservoir] (--k K | --fraction F --records N)\n"
	      "                    [--seed S] [--bs BYTES] [--list] [-v] FASTA\n"
	      "  --method seek       sorted random offsets, lseek + read (--bs default 1K)\n"
	      "  --method reservoir  stream with read() (--bs default 64K), reservoir sampling\n"
	      "  --fraction F        0.001 or 0.1%; needs --records N (see FASTA.nrec)\n"
	      "Prints k and the XXH64 of the sampled records (in file order).\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"method", required_argument, NULL, 'm'},
		{"k", required_argument, NULL, 'k'},
		{"fraction", required_argument, NULL, 'f'},
		{"records", required_argument, NULL, 'N'},
		{"seed", required_argument, NULL, 's'},
		{"bs", required_argument, NULL, 'b'},
		{"list", no_argument, NULL, 'l'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *method = "seek";
	uint64_t k = NONE, records = 0, seed = 1, got, extra = 0;
	double fraction = -1;
	size_t bs = 0;
	int list = 0, verbose = 0, c, fd;
	struct sample *out;
	struct ex_rng r;
	struct ex_hash h;
	double t0;

	ex_set_prog(argv[0]);
	while ((c = getopt_long(argc, argv, "m:k:f:N:s:b:lvh", lo, NULL)) != -1) {
		switch (c) {
		case 'm': method = optarg; break;
		case 'k': k = ex_parse_u64("--k", optarg); break;
		case 'f': {
			char tmp[64];
			size_t l = strlen(optarg);
			if (l > 0 && l < sizeof(tmp) && optarg[l - 1] == '%') {
				memcpy(tmp, optarg, l - 1);
				tmp[l - 1] = '\0';
				fraction = ex_parse_double("--fraction", tmp) / 100.0;
			} else {
				fraction = ex_parse_double("--fraction", optarg);
			}
			if (fraction <= 0 || fraction > 1)
				ex_die("--fraction must be in (0, 1] (or (0%%, 100%%])");
			break;
		}
		case 'N': records = ex_parse_u64("--records", optarg); break;
		case 's': seed = ex_parse_u64("--seed", optarg); break;
		case 'b': bs = (size_t)ex_parse_size("--bs", optarg); break;
		case 'l': list = 1; break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (fraction > 0) {
		if (k != NONE)
			ex_die("give either --k or --fraction, not both");
		if (records == 0)
			ex_die("--fraction needs --records N (the number of records in the file)");
		k = (uint64_t)((double)records * fraction + 0.5);
		if (k == 0)
			k = 1;
	}
	if (k == NONE)
		ex_die("give --k K or --fraction F --records N");
	if (records && k > records)
		ex_die("k=%" PRIu64 " is more than the %" PRIu64 " records", k, records);
	ex_rng_seed(&r, seed);
	out = calloc(k ? k : 1, sizeof(*out));
	if (!out)
		ex_die("out of memory");

	t0 = ex_now();
	fd = ex_open_ro(argv[optind]);
	if (strcmp(method, "seek") == 0) {
		struct win w;
		uint64_t rounds;
		memset(&w, 0, sizeof(w));
		got = sample_seek(fd, ex_file_size(fd, argv[optind]), k, bs ? bs : 1024, &r, out,
				  &rounds, &w);
		extra = rounds;
		if (verbose)
			fprintf(stderr, "fasta_sample: seek rounds=%" PRIu64 " reads=%" PRIu64
					" lseeks=%" PRIu64 "\n",
				rounds, w.reads, w.seeks);
	} else if (strcmp(method, "reservoir") == 0) {
		uint64_t reads;
		got = sample_reservoir(fd, k, bs ? bs : 65536, &r, out, &extra, &reads);
		if (verbose)
			fprintf(stderr, "fasta_sample: reservoir records=%" PRIu64 " reads=%" PRIu64 "\n",
				extra, reads);
	} else {
		ex_die("unknown --method '%s' (seek, reservoir)", method);
	}
	close(fd);

	qsort(out, got, sizeof(*out), cmp_sample);
	ex_hash_init(&h);
	for (uint64_t i = 0; i < got; i++)
		ex_hash_u64(&h, out[i].hash);
	printf("method %s\nk %" PRIu64 "\nsampled %" PRIu64 "\n%s %" PRIu64 "\nchecksum %016" PRIx64
	       "\n",
	       method, k, got, strcmp(method, "seek") == 0 ? "rounds" : "records", extra,
	       ex_hash_final(&h));
	if (list)
		for (uint64_t i = 0; i < got; i++)
			printf("%" PRIu64 " %016" PRIx64 "\n", out[i].start, out[i].hash);
	if (verbose)
		fprintf(stderr, "fasta_sample: %.3f s\n", ex_now() - t0);
	free(out);
	return 0;
}
