/*
 * excommon: what every example program shares.
 *
 * The examples reproduce the seeds' experiments (see examples/README.md). Their
 * standard output must be byte-identical under any iohint policy, so everything
 * here is deterministic: a seeded xoshiro256** generator (same numbers on every
 * machine), an XXH64 checksum that does not depend on how the data was split
 * into reads, and exact integer size parsing. Timing goes to stderr only (-v).
 *
 * Single-threaded helpers except ex_hash/ex_rng, which are per-object and may
 * be used by several threads on distinct objects. Errors in helpers that parse
 * arguments call ex_die(): these are programs, not a library.
 */
#ifndef IOHINT_EXAMPLES_EXCOMMON_H
#define IOHINT_EXAMPLES_EXCOMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Print "PROG: message" to stderr and exit with status 2. */
void ex_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Like ex_die, with ": strerror(errno)" appended. */
void ex_die_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* The name used in messages; set once from argv[0] by ex_set_prog(). */
void ex_set_prog(const char *argv0);

/* "123", "64K", "16M", "1G", "2T" (binary multiples, optional "iB"/"B").
 * Dies with the option name in the message on a malformed value. */
uint64_t ex_parse_size(const char *opt, const char *s);
/* Plain unsigned decimal (or 0x hex); dies on garbage. */
uint64_t ex_parse_u64(const char *opt, const char *s);
double ex_parse_double(const char *opt, const char *s);

/* Seconds on CLOCK_MONOTONIC. */
double ex_now(void);

/* xoshiro256** seeded with splitmix64: the reference generator of
 * https://prng.di.unimi.it/, identical output on every platform. */
struct ex_rng {
	uint64_t s[4];
};
void ex_rng_seed(struct ex_rng *r, uint64_t seed);
uint64_t ex_rng_next(struct ex_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t ex_rng_below(struct ex_rng *r, uint64_t n);
/* Uniform in [lo, hi], lo <= hi. */
uint64_t ex_rng_range(struct ex_rng *r, uint64_t lo, uint64_t hi);
/* Uniform in [0, 1). */
double ex_rng_unit(struct ex_rng *r);
/* A 64-bit mix (splitmix64 finaliser), for position-derived data. */
uint64_t ex_mix64(uint64_t x);

/* Streaming XXH64 (seed 0), bit-exact with the reference implementation, so
 * the result does not depend on how the input is cut into updates. */
struct ex_hash {
	uint64_t v[4];
	uint64_t total;
	unsigned char mem[32];
	size_t memsize;
};
void ex_hash_init(struct ex_hash *h);
void ex_hash_update(struct ex_hash *h, const void *data, size_t len);
uint64_t ex_hash_final(const struct ex_hash *h);
uint64_t ex_hash_buf(const void *data, size_t len);
/* Hash of a little-endian u64, for combining per-record hashes in order. */
void ex_hash_u64(struct ex_hash *h, uint64_t x);

/* pread until len bytes or EOF; returns bytes read, or -errno. */
ssize_t ex_pread_full(int fd, void *buf, size_t len, off_t off);
/* read until len bytes or EOF; returns bytes read, or -errno. */
ssize_t ex_read_full(int fd, void *buf, size_t len);

/* Open for reading or die with the path in the message. */
int ex_open_ro(const char *path);
/* Size of an open file or die. */
uint64_t ex_file_size(int fd, const char *path);

/* Burn CPU for about usec microseconds (an application "thinking"). */
void ex_spin_us(unsigned usec);

#endif
