/*
 * tiny_reads: seed 002, "When Speed Matters Part 2: Binary File I/O".
 *
 * A per-variable binary file of 4-byte integers (the seed's census variable
 * has 14,081,466 of them) read one integer per call:
 *   --mode read   one read(fd, &x, 4) system call per integer (the slow way:
 *                 14 M syscalls; what a coalescing policy should fix)
 *   --mode fread  fread(&x, 4, 1, fp) per integer through stdio's buffer
 *                 (the seed's code; a few thousand read() calls underneath)
 *   --mode bulk   read() of 64 KiB buffers (the reference for "as fast as it gets")
 * All modes print the same count and sum.
 *
 * usage: tiny_reads [--mode read|fread|bulk] [--count N] [-v] FILE
 */
#include "excommon.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("usage: tiny_reads [--mode read|fread|bulk] [--count N] [-v] FILE\n"
	      "Reads up to N (default: all) 4-byte integers, one call per integer;\n"
	      "prints the count and their sum.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"mode", required_argument, NULL, 'm'},
		{"count", required_argument, NULL, 'n'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *mode = "read";
	uint64_t limit = UINT64_MAX, count = 0;
	int64_t sum = 0;
	int verbose = 0, c;
	double t0;

	ex_set_prog(argv[0]);
	while ((c = getopt_long(argc, argv, "m:n:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'n': limit = ex_parse_u64("--count", optarg); break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	t0 = ex_now();
	if (strcmp(mode, "read") == 0) {
		int fd = ex_open_ro(argv[optind]);
		int32_t x;
		while (count < limit) {
			ssize_t n = read(fd, &x, sizeof(x));
			if (n < 0)
				ex_die_errno("read %s", argv[optind]);
			if (n == 0)
				break;
			if (n != (ssize_t)sizeof(x)) {
				/* A short read inside an integer: finish it like fread would. */
				ssize_t m = ex_read_full(fd, (char *)&x + n, sizeof(x) - (size_t)n);
				if (m < 0)
					ex_die("read %s failed", argv[optind]);
				if (n + m != (ssize_t)sizeof(x))
					break; /* trailing partial integer: ignored */
			}
			sum += x;
			count++;
		}
		close(fd);
	} else if (strcmp(mode, "fread") == 0) {
		FILE *fp = fopen(argv[optind], "rb");
		int32_t x;
		if (!fp)
			ex_die_errno("cannot open %s", argv[optind]);
		while (count < limit && fread(&x, sizeof(x), 1, fp) == 1) {
			sum += x;
			count++;
		}
		if (ferror(fp))
			ex_die_errno("fread %s", argv[optind]);
		fclose(fp);
	} else if (strcmp(mode, "bulk") == 0) {
		enum { NINT = 16384 };
		static int32_t buf[NINT];
		int fd = ex_open_ro(argv[optind]);
		while (count < limit) {
			ssize_t n = ex_read_full(fd, buf, sizeof(buf));
			size_t k;
			if (n < 0)
				ex_die("read %s failed", argv[optind]);
			k = (size_t)n / sizeof(buf[0]);
			for (size_t i = 0; i < k && count < limit; i++) {
				sum += buf[i];
				count++;
			}
			if ((size_t)n < sizeof(buf))
				break;
		}
		close(fd);
	} else {
		ex_die("unknown --mode '%s' (read, fread, bulk)", mode);
	}
	printf("ints %" PRIu64 "\nsum %" PRId64 "\n", count, sum);
	if (verbose)
		fprintf(stderr, "tiny_reads: mode=%s %.3f s\n", mode, ex_now() - t0);
	return 0;
}
