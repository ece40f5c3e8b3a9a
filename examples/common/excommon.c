/* excommon.c: see excommon.h. */
#include "excommon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *ex_prog = "example";

void ex_set_prog(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	ex_prog = slash ? slash + 1 : argv0;
}

void ex_die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", ex_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void ex_die_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	fprintf(stderr, "%s: ", ex_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(2);
}

uint64_t ex_parse_u64(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-')
		ex_die("%s: expected a non-negative integer, got '%s'", opt, s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		ex_die("%s: expected a non-negative integer, got '%s'", opt, s);
	return v;
}

uint64_t ex_parse_size(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;
	if (!s || !*s || *s == '-')
		ex_die("%s: expected a size like 4096, 64K, 16M, 1G; got '%s'", opt, s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		ex_die("%s: expected a size like 4096, 64K, 16M, 1G; got '%s'", opt, s);
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	case 't': case 'T': mult = 1ULL << 40; end++; break;
	default: ex_die("%s: unknown size suffix in '%s'", opt, s);
	}
	if (mult > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end)
		ex_die("%s: unknown size suffix in '%s'", opt, s);
	if (v > UINT64_MAX / mult)
		ex_die("%s: size '%s' too large", opt, s);
	return v * mult;
}

double ex_parse_double(const char *opt, const char *s)
{
	char *end;
	double v;
	if (!s || !*s)
		ex_die("%s: expected a number", opt);
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v != v)
		ex_die("%s: expected a number, got '%s'", opt, s);
	return v;
}

double ex_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- random numbers ---------------------------------------------------- */

static uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t ex_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void ex_rng_seed(struct ex_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++) {
		x += 0x9e3779b97f4a7c15ULL;
		r->s[i] = ex_mix64(x);
	}
}

uint64_t ex_rng_next(struct ex_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return result;
}

uint64_t ex_rng_below(struct ex_rng *r, uint64_t n)
{
	/* Reject the top partial bucket so every residue is equally likely. */
	uint64_t threshold = (0 - n) % n;
	uint64_t x;
	do
		x = ex_rng_next(r);
	while (x < threshold);
	return x % n;
}

uint64_t ex_rng_range(struct ex_rng *r, uint64_t lo, uint64_t hi)
{
	if (hi - lo == UINT64_MAX)
		return ex_rng_next(r);
	return lo + ex_rng_below(r, hi - lo + 1);
}

double ex_rng_unit(struct ex_rng *r)
{
	return (double)(ex_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- XXH64 ------------------------------------------------------------- */

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v; /* the examples target little-endian Linux */
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t xxh_round(uint64_t acc, uint64_t input)
{
	acc += input * P2;
	acc = rotl64(acc, 31);
	return acc * P1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t val)
{
	acc ^= xxh_round(0, val);
	return acc * P1 + P4;
}

void ex_hash_init(struct ex_hash *h)
{
	memset(h, 0, sizeof(*h));
	h->v[0] = P1 + P2;
	h->v[1] = P2;
	h->v[2] = 0;
	h->v[3] = 0 - P1;
}

void ex_hash_update(struct ex_hash *h, const void *data, size_t len)
{
	const unsigned char *p = data;
	const unsigned char *end = p + len;

	h->total += len;
	if (h->memsize + len < 32) {
		memcpy(h->mem + h->memsize, p, len);
		h->memsize += len;
		return;
	}
	if (h->memsize) {
		size_t fill = 32 - h->memsize;
		memcpy(h->mem + h->memsize, p, fill);
		for (int i = 0; i < 4; i++)
			h->v[i] = xxh_round(h->v[i], rd64(h->mem + 8 * i));
		p += fill;
		h->memsize = 0;
	}
	while (p + 32 <= end) {
		h->v[0] = xxh_round(h->v[0], rd64(p));
		h->v[1] = xxh_round(h->v[1], rd64(p + 8));
		h->v[2] = xxh_round(h->v[2], rd64(p + 16));
		h->v[3] = xxh_round(h->v[3], rd64(p + 24));
		p += 32;
	}
	if (p < end) {
		memcpy(h->mem, p, (size_t)(end - p));
		h->memsize = (size_t)(end - p);
	}
}

uint64_t ex_hash_final(const struct ex_hash *h)
{
	const unsigned char *p = h->mem;
	const unsigned char *end = p + h->memsize;
	uint64_t acc;

	if (h->total >= 32) {
		acc = rotl64(h->v[0], 1) + rotl64(h->v[1], 7) + rotl64(h->v[2], 12) +
		      rotl64(h->v[3], 18);
		for (int i = 0; i < 4; i++)
			acc = xxh_merge(acc, h->v[i]);
	} else {
		acc = h->v[2] + P5;
	}
	acc += h->total;
	while (p + 8 <= end) {
		acc ^= xxh_round(0, rd64(p));
		acc = rotl64(acc, 27) * P1 + P4;
		p += 8;
	}
	if (p + 4 <= end) {
		acc ^= (uint64_t)rd32(p) * P1;
		acc = rotl64(acc, 23) * P2 + P3;
		p += 4;
	}
	while (p < end) {
		acc ^= (uint64_t)(*p) * P5;
		acc = rotl64(acc, 11) * P1;
		p++;
	}
	acc ^= acc >> 33;
	acc *= P2;
	acc ^= acc >> 29;
	acc *= P3;
	acc ^= acc >> 32;
	return acc;
}

uint64_t ex_hash_buf(const void *data, size_t len)
{
	struct ex_hash h;
	ex_hash_init(&h);
	ex_hash_update(&h, data, len);
	return ex_hash_final(&h);
}

void ex_hash_u64(struct ex_hash *h, uint64_t x)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(x >> (8 * i));
	ex_hash_update(h, b, sizeof(b));
}

/* ---- I/O --------------------------------------------------------------- */

ssize_t ex_pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t ex_read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int ex_open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		ex_die_errno("cannot open %s", path);
	return fd;
}

uint64_t ex_file_size(int fd, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		ex_die_errno("cannot stat %s", path);
	return (uint64_t)st.st_size;
}

void ex_spin_us(unsigned usec)
{
	double until = ex_now() + (double)usec * 1e-6;
	volatile unsigned sink = 0;
	while (ex_now() < until)
		for (int i = 0; i < 64; i++)
			sink = sink + (unsigned)i;
}
