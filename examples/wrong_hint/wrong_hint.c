/*
 * wrong_hint: seed 004, "Effect of POSIX_FADV_SEQUENTIAL and POSIX_FADV_RANDOM".
 *
 * Reads a file front to back in 8 KiB read() calls after telling the kernel
 * posix_fadvise(POSIX_FADV_RANDOM) -- the wrong hint: read-ahead is switched off
 * and every 8 KiB read waits for the device (seed: 16 s instead of 0.7 s for
 * 1 GB). --hint sequential gives the right hint, --hint none gives no hint; the
 * bytes read and their checksum are the same in all cases, and they equal
 * `gendata hash FILE`.
 *
 * usage: wrong_hint [--hint random|sequential|none|normal|noreuse|willneed]
 *                   [--bs BYTES] [-v] FILE
 */
#include "excommon.h"

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	int advice; /* -1: no posix_fadvise call at all */
} hints[] = {
	{"random", POSIX_FADV_RANDOM},     {"sequential", POSIX_FADV_SEQUENTIAL},
	{"none", -1},                      {"normal", POSIX_FADV_NORMAL},
	{"noreuse", POSIX_FADV_NOREUSE},   {"willneed", POSIX_FADV_WILLNEED},
};

static void usage(FILE *f)
{
	fputs("usage: wrong_hint [--hint random|sequential|none|normal|noreuse|willneed]\n"
	      "                  [--bs BYTES] [-v] FILE\n"
	      "Reads FILE sequentially in --bs reads (default 8192) after the hint\n"
	      "(default random: the wrong one). Prints bytes and XXH64 checksum.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"hint", required_argument, NULL, 'H'},
		{"bs", required_argument, NULL, 'b'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *hint = "random";
	size_t bs = 8192;
	int verbose = 0, advice = -2, c, fd, err;
	uint64_t total = 0, calls = 0;
	struct ex_hash h;
	char *buf;
	double t0;
	ssize_t n;

	ex_set_prog(argv[0]);
	while ((c = getopt_long(argc, argv, "H:b:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'H': hint = optarg; break;
		case 'b': bs = (size_t)ex_parse_size("--bs", optarg); break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strcmp(hint, hints[i].name) == 0)
			advice = hints[i].advice;
	if (advice == -2)
		ex_die("unknown --hint '%s'", hint);
	if (bs == 0 || bs > (1u << 30))
		ex_die("--bs must be between 1 and 1G");
	buf = malloc(bs);
	if (!buf)
		ex_die("out of memory");

	t0 = ex_now();
	fd = ex_open_ro(argv[optind]);
	if (advice >= 0 && (err = posix_fadvise(fd, 0, 0, advice)) != 0)
		ex_die("posix_fadvise(%s): %s", hint, strerror(err));
	ex_hash_init(&h);
	while ((n = read(fd, buf, bs)) != 0) {
		if (n < 0)
			ex_die_errno("read %s", argv[optind]);
		ex_hash_update(&h, buf, (size_t)n);
		total += (uint64_t)n;
		calls++;
	}
	close(fd);
	printf("bytes %" PRIu64 "\nchecksum %016" PRIx64 "\n", total, ex_hash_final(&h));
	if (verbose)
		fprintf(stderr, "wrong_hint: hint=%s bs=%zu reads=%" PRIu64 " %.3f s %.1f MiB/s\n",
			hint, bs, calls, ex_now() - t0,
			(double)total / (1 << 20) / (ex_now() - t0 + 1e-9));
	free(buf);
	return 0;
}
