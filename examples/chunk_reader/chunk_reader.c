/*
 * chunk_reader: seed 001, "From IO-less to Networks" (Furano, INFN 2009).
 *
 * Reads the (offset, length) chunks listed in LIST from FILE, one synchronous
 * request each, in list order -- the seed's TestXrdClient replaying
 * "offsetlen nurcan2.txt" (95,651 reads: 120 s synchronous over a 1.25 ms LAN,
 * 5.6 s with asynchronous prefetch, 2.1 s with vectored reads). Lists come from
 * `gendata chunks`: strided ("1 KB every 10 KB"), windowed (the ATLAS "random
 * but not quite" pattern: a window drifting slowly forward) and sparse.
 *
 *   --io pread   one pread() per chunk (default)
 *   --io read    lseek() + read() per chunk
 *   --think-us U --think-every M
 *                burn U microseconds of CPU after every M chunks (the seed's
 *                "10 ms every 100 reads" of an application that computes)
 * Prints the number of chunks, bytes and the XXH64 of the data in list order.
 * LIST lines are "OFFSET LENGTH"; '#' starts a comment.
 */
#include "excommon.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct chunk {
	uint64_t off, len;
};

static struct chunk *load_list(const char *path, size_t *n_out, uint64_t *maxlen)
{
	FILE *f = fopen(path, "r");
	struct chunk *v = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char line[256];

	if (!f)
		ex_die_errno("cannot open list %s", path);
	*maxlen = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, len;
		char *p = line;
		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\0')
			continue;
		if (sscanf(p, "%llu %llu", &off, &len) != 2)
			ex_die("%s:%zu: expected 'OFFSET LENGTH'", path, lineno);
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				ex_die("out of memory");
		}
		v[n].off = off;
		v[n].len = len;
		if (len > *maxlen)
			*maxlen = len;
		n++;
	}
	fclose(f);
	if (*maxlen > (1u << 30))
		ex_die("%s: chunk longer than 1 GiB", path);
	*n_out = n;
	return v;
}

static void usage(FILE *f)
{
	fputs("usage: chunk_reader [--io pread|read] [--think-us U --think-every M] [-v] FILE LIST\n"
	      "Reads each 'OFFSET LENGTH' chunk of LIST from FILE in order; prints the\n"
	      "chunk count, bytes read and XXH64 of the data.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"io", required_argument, NULL, 'i'},
		{"think-us", required_argument, NULL, 'T'},
		{"think-every", required_argument, NULL, 'E'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *io = "pread";
	unsigned think_us = 0;
	uint64_t think_every = 100, bytes = 0, maxlen;
	int verbose = 0, use_pread, c, fd;
	struct chunk *list;
	struct ex_hash h;
	size_t n;
	char *buf;
	double t0;

	ex_set_prog(argv[0]);
	while ((c = getopt_long(argc, argv, "i:T:E:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'i': io = optarg; break;
		case 'T': think_us = (unsigned)ex_parse_u64("--think-us", optarg); break;
		case 'E': think_every = ex_parse_u64("--think-every", optarg); break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 2 != argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(io, "pread") == 0)
		use_pread = 1;
	else if (strcmp(io, "read") == 0)
		use_pread = 0;
	else
		ex_die("unknown --io '%s' (pread, read)", io);
	if (think_every == 0)
		think_every = 1;

	list = load_list(argv[optind + 1], &n, &maxlen);
	buf = malloc(maxlen ? maxlen : 1);
	if (!buf)
		ex_die("out of memory");
	t0 = ex_now();
	fd = ex_open_ro(argv[optind]);
	ex_hash_init(&h);
	for (size_t i = 0; i < n; i++) {
		ssize_t got;
		if (use_pread) {
			got = ex_pread_full(fd, buf, list[i].len, (off_t)list[i].off);
		} else {
			if (lseek(fd, (off_t)list[i].off, SEEK_SET) < 0)
				ex_die_errno("lseek to %" PRIu64, list[i].off);
			got = ex_read_full(fd, buf, list[i].len);
		}
		if (got < 0) {
			errno = (int)-got;
			ex_die_errno("reading chunk %zu (offset %" PRIu64 ")", i, list[i].off);
		}
		ex_hash_update(&h, buf, (size_t)got);
		bytes += (uint64_t)got;
		if (think_us && (i + 1) % think_every == 0)
			ex_spin_us(think_us);
	}
	close(fd);
	printf("chunks %zu\nbytes %" PRIu64 "\nchecksum %016" PRIx64 "\n", n, bytes,
	       ex_hash_final(&h));
	if (verbose)
		fprintf(stderr, "chunk_reader: io=%s %.3f s (%.1f us per chunk)\n", io,
			ex_now() - t0, n ? (ex_now() - t0) * 1e6 / (double)n : 0.0);
	free(buf);
	free(list);
	return 0;
}
