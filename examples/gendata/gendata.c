/*
 * gendata: the deterministic data generator behind every example.
 *
 * One subcommand per kind of file; the same arguments always produce the same
 * bytes (seeded xoshiro256**), so tests can use small files and benchmarks large
 * ones built the same way. examples/gen-data.sh calls this for a whole data set.
 *
 *   gendata bytes  --size SIZE [--seed S] OUT        random bytes (wrong_hint, chunk_reader)
 *   gendata ints   --count N [--values V] [--seed S] OUT
 *                                                    N little-endian int32 in 1..V (tiny_reads)
 *   gendata fasta  --size SIZE [--seed S] [--min-len A --max-len B --width W] OUT
 *                                                    EST-like FASTA (fasta_sample); prints "records N"
 *   gendata chunks --pattern strided|windowed|sparse (--file F | --file-size SIZE)
 *                  [--count N] [--len L] [--stride S] [--window W] [--sorted] [--seed S] OUT
 *                                                    (offset, length) list (chunk_reader)
 *   gendata blocks --size SIZE [--seed S] [--min-block A --max-block B] DATA INDEX
 *                                                    block file + index (index_reader); prints "blocks N"
 *   gendata ref    --chroms N --chrom-len L [--seed S] OUT           reference FASTA (samtools)
 *   gendata sam    --chroms N --chrom-len L --pairs N [--read-len R] [--seed S] OUT|-
 *                                                    paired-end SAM text matching "ref" with the same seed
 *   gendata bed    --chroms N --chrom-len L --regions N [--min-len A --max-len B] [--seed S] OUT
 *   gendata names  --records N --count K [--seed S] OUT|-            K distinct EST names, random order
 *   gendata hash   FILE...                           XXH64 of each file (the examples' checksum)
 */
#include "excommon.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct opts {
	uint64_t size, count, seed, len, stride, window, min_len, max_len, width;
	uint64_t file_size, chroms, chrom_len, pairs, read_len, regions, records, values;
	uint64_t min_block, max_block;
	const char *pattern, *file;
	int sorted;
	int has_size, has_count, has_len, has_window, has_min, has_max;
};

enum {
	O_SIZE = 256, O_COUNT, O_SEED, O_LEN, O_STRIDE, O_WINDOW, O_MINLEN, O_MAXLEN,
	O_WIDTH, O_FILESIZE, O_FILE, O_PATTERN, O_SORTED, O_CHROMS, O_CHROMLEN, O_PAIRS,
	O_READLEN, O_REGIONS, O_RECORDS, O_VALUES, O_MINBLOCK, O_MAXBLOCK,
};

static const struct option long_opts[] = {
	{"size", required_argument, NULL, O_SIZE},
	{"count", required_argument, NULL, O_COUNT},
	{"seed", required_argument, NULL, O_SEED},
	{"len", required_argument, NULL, O_LEN},
	{"stride", required_argument, NULL, O_STRIDE},
	{"window", required_argument, NULL, O_WINDOW},
	{"min-len", required_argument, NULL, O_MINLEN},
	{"max-len", required_argument, NULL, O_MAXLEN},
	{"width", required_argument, NULL, O_WIDTH},
	{"file-size", required_argument, NULL, O_FILESIZE},
	{"file", required_argument, NULL, O_FILE},
	{"pattern", required_argument, NULL, O_PATTERN},
	{"sorted", no_argument, NULL, O_SORTED},
	{"chroms", required_argument, NULL, O_CHROMS},
	{"chrom-len", required_argument, NULL, O_CHROMLEN},
	{"pairs", required_argument, NULL, O_PAIRS},
	{"read-len", required_argument, NULL, O_READLEN},
	{"regions", required_argument, NULL, O_REGIONS},
	{"records", required_argument, NULL, O_RECORDS},
	{"values", required_argument, NULL, O_VALUES},
	{"min-block", required_argument, NULL, O_MINBLOCK},
	{"max-block", required_argument, NULL, O_MAXBLOCK},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fputs("usage: gendata bytes|ints|fasta|chunks|blocks|ref|sam|bed|names|hash [options] OUT...\n"
	      "  bytes  --size SIZE [--seed S] OUT\n"
	      "  ints   --count N [--values V] [--seed S] OUT\n"
	      "  fasta  --size SIZE [--seed S] [--min-len 100] [--max-len 1100] [--width 60] OUT\n"
	      "  chunks --pattern strided|windowed|sparse (--file F | --file-size SIZE)\n"
	      "         [--count N] [--len L] [--stride S] [--window W] [--sorted] [--seed S] OUT\n"
	      "  blocks --size SIZE [--min-block 2K] [--max-block 30K] [--seed S] DATA INDEX\n"
	      "  ref    --chroms N --chrom-len L [--seed S] OUT\n"
	      "  sam    --chroms N --chrom-len L --pairs N [--read-len 150] [--seed S] OUT|-\n"
	      "  bed    --chroms N --chrom-len L --regions N [--min-len 1000] [--max-len 10000] [--seed S] OUT\n"
	      "  names  --records N --count K [--seed S] OUT|-\n"
	      "  hash   FILE...\n"
	      "SIZE takes K/M/G suffixes (binary). Same arguments, same bytes.\n",
	      f);
}

static FILE *open_out(const char *path)
{
	FILE *f;
	if (strcmp(path, "-") == 0)
		f = stdout;
	else
		f = fopen(path, "w");
	if (!f)
		ex_die_errno("cannot create %s", path);
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

static void close_out(FILE *f, const char *path)
{
	if (fflush(f) != 0 || ferror(f))
		ex_die_errno("write error on %s", path);
	if (f != stdout && fclose(f) != 0)
		ex_die_errno("write error on %s", path);
}

static void need(int have, const char *cmd, const char *opt)
{
	if (!have)
		ex_die("%s: %s is required", cmd, opt);
}

/* ---- bytes ------------------------------------------------------------- */

static void gen_bytes(const struct opts *o, const char *out)
{
	enum { BUF = 1 << 20 };
	static uint64_t buf[BUF / 8];
	struct ex_rng r;
	FILE *f = open_out(out);
	uint64_t left = o->size;

	ex_rng_seed(&r, o->seed);
	while (left) {
		size_t n = left < BUF ? (size_t)left : BUF;
		for (size_t i = 0; i < (n + 7) / 8; i++)
			buf[i] = ex_rng_next(&r);
		if (fwrite(buf, 1, n, f) != n)
			ex_die_errno("write error on %s", out);
		left -= n;
	}
	close_out(f, out);
}

/* ---- ints -------------------------------------------------------------- */

static void gen_ints(const struct opts *o, const char *out)
{
	struct ex_rng r;
	FILE *f = open_out(out);
	uint64_t values = o->values ? o->values : 2;

	ex_rng_seed(&r, o->seed);
	for (uint64_t i = 0; i < o->count; i++) {
		uint32_t v = (uint32_t)(1 + ex_rng_below(&r, values));
		unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
				      (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
		if (fwrite(b, 1, 4, f) != 4)
			ex_die_errno("write error on %s", out);
	}
	close_out(f, out);
}

/* ---- fasta ------------------------------------------------------------- */

static void gen_fasta(const struct opts *o, const char *out)
{
	static const char bases[] = "ACGT";
	struct ex_rng r;
	FILE *f = open_out(out);
	uint64_t written = 0, nrec = 0;
	uint64_t min_len = o->has_min ? o->min_len : 100;
	uint64_t max_len = o->has_max ? o->max_len : 1100;
	uint64_t width = o->width ? o->width : 60;
	char line[1024];

	if (min_len < 1 || max_len < min_len || width >= sizeof(line))
		ex_die("fasta: need 1 <= --min-len <= --max-len and --width < %zu", sizeof(line));
	ex_rng_seed(&r, o->seed);
	while (written < o->size) {
		uint64_t len = ex_rng_range(&r, min_len, max_len);
		int h = fprintf(f, ">EST%09" PRIu64 " synthetic est len=%" PRIu64 "\n", nrec, len);
		if (h < 0)
			ex_die_errno("write error on %s", out);
		written += (uint64_t)h;
		while (len) {
			size_t n = len < width ? (size_t)len : (size_t)width;
			uint64_t bits = 0;
			for (size_t i = 0; i < n; i++) {
				if (i % 32 == 0)
					bits = ex_rng_next(&r);
				line[i] = bases[bits & 3];
				bits >>= 2;
			}
			line[n] = '\n';
			if (fwrite(line, 1, n + 1, f) != n + 1)
				ex_die_errno("write error on %s", out);
			written += n + 1;
			len -= n;
		}
		nrec++;
	}
	close_out(f, out);
	printf("records %" PRIu64 "\nbytes %" PRIu64 "\n", nrec, written);
}

/* ---- chunk lists ------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void gen_chunks(const struct opts *o, const char *out)
{
	struct ex_rng r;
	uint64_t size = o->file_size;
	FILE *f;

	if (o->file) {
		struct stat st;
		if (stat(o->file, &st) < 0)
			ex_die_errno("chunks: cannot stat %s", o->file);
		size = (uint64_t)st.st_size;
	}
	if (!o->pattern)
		ex_die("chunks: --pattern strided|windowed|sparse is required");
	if (size == 0)
		ex_die("chunks: --file or --file-size (non-empty) is required");
	ex_rng_seed(&r, o->seed);
	f = open_out(out);
	fprintf(f, "# gendata chunks pattern=%s file_size=%" PRIu64 " seed=%" PRIu64 "\n",
		o->pattern, size, o->seed);

	if (strcmp(o->pattern, "strided") == 0) {
		/* Seed 001: "we know what our forward reader app needs: 1KB every 10KB". */
		uint64_t len = o->has_len ? o->len : 1024;
		uint64_t stride = o->stride ? o->stride : 10240;
		uint64_t n = 0;
		for (uint64_t off = 0; off + len <= size; off += stride) {
			if (o->has_count && n >= o->count)
				break;
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", off, len);
			n++;
		}
	} else if (strcmp(o->pattern, "windowed") == 0) {
		/*
		 * Seed 001's ATLAS AOD plot: "random, but not quite". Reads hop back and
		 * forth inside a window (235M-255M held most of the first 1000 reads of a
		 * ~1 GB file, so the window is 1/50 of the file here) whose centre drifts
		 * forward slowly over the run; 5% of reads land anywhere. Small reads,
		 * 64..2800 bytes (mean ~1.4 KB, like the seed's 132,851,819 B / 95,651).
		 */
		uint64_t count = o->has_count ? o->count : 95651;
		uint64_t window = o->has_window ? o->window : size / 50;
		uint64_t lmin = o->has_min ? o->min_len : 64;
		uint64_t lmax = o->has_max ? o->max_len : 2800;
		if (window < (256u << 10))
			window = 256u << 10;
		if (window > size)
			window = size;
		if (lmax > window || lmin > lmax || lmin == 0)
			ex_die("chunks: need 0 < --min-len <= --max-len <= window");
		for (uint64_t i = 0; i < count; i++) {
			uint64_t len = ex_rng_range(&r, lmin, lmax);
			uint64_t off;
			if (ex_rng_below(&r, 100) < 5) {
				off = ex_rng_below(&r, size - len + 1);
			} else {
				/* window start moves linearly from 0 to size - window */
				uint64_t span = size - window;
				uint64_t start = count > 1 ? (uint64_t)((double)span * (double)i /
									(double)(count - 1))
							   : 0;
				off = start + ex_rng_below(&r, window - len + 1);
			}
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", off, len);
		}
	} else if (strcmp(o->pattern, "sparse") == 0) {
		/* Reads scattered over the whole file: no small window holds them. */
		uint64_t len = o->has_len ? o->len : 4096;
		uint64_t count = o->has_count ? o->count : (size >> 20) * 10;
		uint64_t *offs;
		if (len > size)
			ex_die("chunks: --len larger than the file");
		if (count == 0)
			count = 1;
		offs = malloc(count * sizeof(*offs));
		if (!offs)
			ex_die("out of memory");
		for (uint64_t i = 0; i < count; i++)
			offs[i] = ex_rng_below(&r, size - len + 1);
		if (o->sorted)
			qsort(offs, count, sizeof(*offs), cmp_u64);
		for (uint64_t i = 0; i < count; i++)
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", offs[i], len);
		free(offs);
	} else {
		ex_die("chunks: unknown --pattern '%s' (strided, windowed, sparse)", o->pattern);
	}
	close_out(f, out);
}

/* ---- blocks + index ---------------------------------------------------- */

/*
 * Seed 003 reads MAF blocks found through an index. Each block here is a header
 * line "#blk <id> <payload-len>\n" followed by payload lines of letters; the
 * index has one line "offset length id" per block, in file order.
 */
static void gen_blocks(const struct opts *o, const char *data, const char *index)
{
	static const char alpha[] = "ACGTNacgtn-ACGTACGTACGTACGTACGT";
	uint64_t bmin = o->min_block ? o->min_block : 2048;
	uint64_t bmax = o->max_block ? o->max_block : 30720;
	struct ex_rng r;
	FILE *fd = open_out(data), *fi = open_out(index);
	uint64_t off = 0, id = 0;
	char *buf;

	if (bmin < 64 || bmax < bmin)
		ex_die("blocks: need 64 <= --min-block <= --max-block");
	buf = malloc(bmax + 64);
	if (!buf)
		ex_die("out of memory");
	ex_rng_seed(&r, o->seed);
	while (off < o->size) {
		uint64_t total = ex_rng_range(&r, bmin, bmax);
		int h = snprintf(buf, 64, "#blk %010" PRIu64 " ", id);
		uint64_t payload = total - (uint64_t)h - 9; /* "%08u\n" after the prefix */
		uint64_t bits = 0;
		snprintf(buf + h, 10, "%08" PRIu64 "\n", payload);
		for (uint64_t i = 0; i < payload; i++) {
			char *c = buf + h + 9 + i;
			if (i % 81 == 80 || i + 1 == payload) {
				*c = '\n';
				continue;
			}
			if (i % 12 == 0)
				bits = ex_rng_next(&r);
			*c = alpha[bits & 31];
			bits >>= 5;
		}
		if (fwrite(buf, 1, total, fd) != total)
			ex_die_errno("write error on %s", data);
		fprintf(fi, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", off, total, id);
		off += total;
		id++;
	}
	free(buf);
	close_out(fd, data);
	close_out(fi, index);
	printf("blocks %" PRIu64 "\nbytes %" PRIu64 "\n", id, off);
}

/* ---- reference, SAM, BED ------------------------------------------------ */

/* Base at 0-based pos of chromosome chrom (1-based): a pure function of the
 * seed, so "sam" can cut reads out of the reference without reading it. */
static char ref_base(uint64_t seed, uint64_t chrom, uint64_t pos)
{
	uint64_t h = ex_mix64(seed * 0x9e3779b97f4a7c15ULL ^ (chrom << 48) ^ (pos >> 5));
	return "ACGT"[(h >> ((pos & 31) * 2)) & 3];
}

static void need_genome(const struct opts *o, const char *cmd)
{
	need(o->chroms > 0, cmd, "--chroms N");
	need(o->chrom_len > 0, cmd, "--chrom-len L");
}

static void gen_ref(const struct opts *o, const char *out)
{
	FILE *f = open_out(out);
	char line[64];
	need_genome(o, "ref");
	for (uint64_t c = 1; c <= o->chroms; c++) {
		fprintf(f, ">chr%" PRIu64 "\n", c);
		for (uint64_t pos = 0; pos < o->chrom_len; pos += 60) {
			uint64_t n = o->chrom_len - pos < 60 ? o->chrom_len - pos : 60;
			for (uint64_t i = 0; i < n; i++)
				line[i] = ref_base(o->seed, c, pos + i);
			line[n] = '\n';
			if (fwrite(line, 1, n + 1, f) != n + 1)
				ex_die_errno("write error on %s", out);
		}
	}
	close_out(f, out);
}

static char *put_read(char *p, struct ex_rng *r, uint64_t seed, uint64_t chrom, uint64_t pos,
		      uint64_t len, unsigned *nm)
{
	static const char bases[] = "ACGT";
	*nm = 0;
	for (uint64_t i = 0; i < len; i++) {
		char b = ref_base(seed, chrom, pos + i);
		if (ex_rng_below(r, 100) == 0) { /* 1% substitutions */
			char alt = bases[ex_rng_below(r, 4)];
			if (alt != b) {
				b = alt;
				(*nm)++;
			}
		}
		*p++ = b;
	}
	return p;
}

static char *put_qual(char *p, struct ex_rng *r, uint64_t len)
{
	/* Quality falls along the read with some noise: compressible like real data. */
	int base = (int)ex_rng_range(r, 28, 39);
	for (uint64_t i = 0; i < len; i++) {
		int q = base - (int)(i * 10 / len) + (int)ex_rng_below(r, 11) - 5;
		if (q < 2)
			q = 2;
		if (q > 41)
			q = 41;
		*p++ = (char)(33 + q);
	}
	return p;
}

static void gen_sam(const struct opts *o, const char *out)
{
	uint64_t rl = o->read_len ? o->read_len : 150;
	struct ex_rng r;
	FILE *f;
	char *line;

	need_genome(o, "sam");
	need(o->pairs > 0, "sam", "--pairs N");
	if (o->chrom_len < 600 || rl > 250)
		ex_die("sam: need --chrom-len >= 600 and --read-len <= 250");
	line = malloc(2 * rl + 512);
	if (!line)
		ex_die("out of memory");
	f = open_out(out);
	fputs("@HD\tVN:1.6\tSO:unsorted\n", f);
	for (uint64_t c = 1; c <= o->chroms; c++)
		fprintf(f, "@SQ\tSN:chr%" PRIu64 "\tLN:%" PRIu64 "\n", c, o->chrom_len);
	fputs("@RG\tID:rg1\tSM:synthetic\tPL:ILLUMINA\n"
	      "@PG\tID:gendata\tPN:gendata\tVN:1\n",
	      f);
	ex_rng_seed(&r, o->seed ^ 0x5a5a5a5aULL);
	for (uint64_t i = 0; i < o->pairs; i++) {
		uint64_t chrom = 1 + ex_rng_below(&r, o->chroms);
		uint64_t frag = ex_rng_range(&r, 250, 500);
		uint64_t left = ex_rng_below(&r, o->chrom_len - frag + 1);
		uint64_t right = left + frag - rl;
		int r1_fwd = ex_rng_below(&r, 2) == 0;
		unsigned extra = 0;
		unsigned mapq = ex_rng_below(&r, 10) == 0 ? (unsigned)ex_rng_below(&r, 60) : 60;
		uint64_t u = ex_rng_below(&r, 1000);
		if (u < 20)
			extra |= 1024; /* duplicate */
		else if (u < 22)
			extra |= 512; /* QC fail */
		for (int mate = 0; mate < 2; mate++) {
			/* mate 0 = R1; the forward read sits at the left end */
			int fwd = mate == 0 ? r1_fwd : !r1_fwd;
			uint64_t pos = fwd ? left : right;
			uint64_t mpos = fwd ? right : left;
			unsigned flag = 1 | 2 | (mate == 0 ? 64 : 128) | (fwd ? 32 : 16) | extra;
			long long tlen = fwd ? (long long)frag : -(long long)frag;
			unsigned nm;
			char *p = line;
			p += sprintf(p, "p%09" PRIu64 "\t%u\tchr%" PRIu64 "\t%" PRIu64 "\t%u\t%" PRIu64
					"M\t=\t%" PRIu64 "\t%lld\t",
				     i, flag, chrom, pos + 1, mapq, rl, mpos + 1, tlen);
			p = put_read(p, &r, o->seed, chrom, pos, rl, &nm);
			*p++ = '\t';
			p = put_qual(p, &r, rl);
			p += sprintf(p, "\tNM:i:%u\tRG:Z:rg1\n", nm);
			if (fwrite(line, 1, (size_t)(p - line), f) != (size_t)(p - line))
				ex_die_errno("write error on %s", out);
		}
	}
	free(line);
	close_out(f, out);
}

struct region {
	uint64_t chrom, start, end;
};

static int cmp_region(const void *a, const void *b)
{
	const struct region *x = a, *y = b;
	if (x->chrom != y->chrom)
		return (x->chrom > y->chrom) - (x->chrom < y->chrom);
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->end > y->end) - (x->end < y->end);
}

static void gen_bed(const struct opts *o, const char *out)
{
	uint64_t lmin = o->has_min ? o->min_len : 1000;
	uint64_t lmax = o->has_max ? o->max_len : 10000;
	struct region *reg;
	struct ex_rng r;
	FILE *f;

	need_genome(o, "bed");
	need(o->regions > 0, "bed", "--regions N");
	if (lmin == 0 || lmax < lmin || lmax > o->chrom_len)
		ex_die("bed: need 0 < --min-len <= --max-len <= --chrom-len");
	reg = malloc(o->regions * sizeof(*reg));
	if (!reg)
		ex_die("out of memory");
	ex_rng_seed(&r, o->seed ^ 0xbedbedULL);
	for (uint64_t i = 0; i < o->regions; i++) {
		uint64_t len = ex_rng_range(&r, lmin, lmax);
		reg[i].chrom = 1 + ex_rng_below(&r, o->chroms);
		reg[i].start = ex_rng_below(&r, o->chrom_len - len + 1);
		reg[i].end = reg[i].start + len;
	}
	qsort(reg, o->regions, sizeof(*reg), cmp_region);
	f = open_out(out);
	for (uint64_t i = 0; i < o->regions; i++)
		fprintf(f, "chr%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", reg[i].chrom, reg[i].start,
			reg[i].end);
	close_out(f, out);
	free(reg);
}

static void gen_names(const struct opts *o, const char *out)
{
	struct ex_rng r;
	uint32_t *idx;
	FILE *f;

	need(o->records > 0, "names", "--records N");
	need(o->has_count, "names", "--count K");
	if (o->count > o->records || o->records > UINT32_MAX)
		ex_die("names: need --count <= --records < 2^32");
	idx = malloc(o->records * sizeof(*idx));
	if (!idx)
		ex_die("out of memory");
	for (uint64_t i = 0; i < o->records; i++)
		idx[i] = (uint32_t)i;
	ex_rng_seed(&r, o->seed);
	f = open_out(out);
	/* partial Fisher-Yates: the first K of a uniform shuffle, in shuffled order */
	for (uint64_t i = 0; i < o->count; i++) {
		uint64_t j = i + ex_rng_below(&r, o->records - i);
		uint32_t t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		fprintf(f, "EST%09" PRIu32 "\n", idx[i]);
	}
	close_out(f, out);
	free(idx);
}

static void gen_hash(const char *path)
{
	static char buf[1 << 20];
	struct ex_hash h;
	int fd = ex_open_ro(path);
	ssize_t n;
	ex_hash_init(&h);
	while ((n = ex_read_full(fd, buf, sizeof(buf))) > 0)
		ex_hash_update(&h, buf, (size_t)n);
	if (n < 0)
		ex_die("read error on %s", path);
	close(fd);
	printf("%016" PRIx64 "  %s\n", ex_hash_final(&h), path);
}

int main(int argc, char **argv)
{
	struct opts o;
	const char *cmd;
	int c;

	ex_set_prog("gendata");
	memset(&o, 0, sizeof(o));
	o.seed = 1;
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	argv++;
	argc--;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case O_SIZE: o.size = ex_parse_size("--size", optarg); o.has_size = 1; break;
		case O_COUNT: o.count = ex_parse_u64("--count", optarg); o.has_count = 1; break;
		case O_SEED: o.seed = ex_parse_u64("--seed", optarg); break;
		case O_LEN: o.len = ex_parse_size("--len", optarg); o.has_len = 1; break;
		case O_STRIDE: o.stride = ex_parse_size("--stride", optarg); break;
		case O_WINDOW: o.window = ex_parse_size("--window", optarg); o.has_window = 1; break;
		case O_MINLEN: o.min_len = ex_parse_size("--min-len", optarg); o.has_min = 1; break;
		case O_MAXLEN: o.max_len = ex_parse_size("--max-len", optarg); o.has_max = 1; break;
		case O_WIDTH: o.width = ex_parse_u64("--width", optarg); break;
		case O_FILESIZE: o.file_size = ex_parse_size("--file-size", optarg); break;
		case O_FILE: o.file = optarg; break;
		case O_PATTERN: o.pattern = optarg; break;
		case O_SORTED: o.sorted = 1; break;
		case O_CHROMS: o.chroms = ex_parse_u64("--chroms", optarg); break;
		case O_CHROMLEN: o.chrom_len = ex_parse_size("--chrom-len", optarg); break;
		case O_PAIRS: o.pairs = ex_parse_u64("--pairs", optarg); break;
		case O_READLEN: o.read_len = ex_parse_u64("--read-len", optarg); break;
		case O_REGIONS: o.regions = ex_parse_u64("--regions", optarg); break;
		case O_RECORDS: o.records = ex_parse_u64("--records", optarg); break;
		case O_VALUES: o.values = ex_parse_u64("--values", optarg); break;
		case O_MINBLOCK: o.min_block = ex_parse_size("--min-block", optarg); break;
		case O_MAXBLOCK: o.max_block = ex_parse_size("--max-block", optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	argc -= optind;
	argv += optind;

	if (strcmp(cmd, "hash") == 0) {
		if (argc < 1)
			ex_die("hash: FILE... required");
		for (int i = 0; i < argc; i++)
			gen_hash(argv[i]);
		return 0;
	}
	if (strcmp(cmd, "blocks") == 0) {
		if (argc != 2)
			ex_die("blocks: DATA and INDEX paths required");
		need(o.has_size, cmd, "--size SIZE");
		gen_blocks(&o, argv[0], argv[1]);
		return 0;
	}
	if (argc != 1)
		ex_die("%s: exactly one output path required (see --help)", cmd);
	if (strcmp(cmd, "bytes") == 0) {
		need(o.has_size, cmd, "--size SIZE");
		gen_bytes(&o, argv[0]);
	} else if (strcmp(cmd, "ints") == 0) {
		need(o.has_count, cmd, "--count N");
		gen_ints(&o, argv[0]);
	} else if (strcmp(cmd, "fasta") == 0) {
		need(o.has_size, cmd, "--size SIZE");
		gen_fasta(&o, argv[0]);
	} else if (strcmp(cmd, "chunks") == 0) {
		gen_chunks(&o, argv[0]);
	} else if (strcmp(cmd, "ref") == 0) {
		gen_ref(&o, argv[0]);
	} else if (strcmp(cmd, "sam") == 0) {
		gen_sam(&o, argv[0]);
	} else if (strcmp(cmd, "bed") == 0) {
		gen_bed(&o, argv[0]);
	} else if (strcmp(cmd, "names") == 0) {
		gen_names(&o, argv[0]);
	} else {
		ex_die("unknown subcommand '%s' (see --help)", cmd);
	}
	return 0;
}
