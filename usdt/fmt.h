/* SPDX-License-Identifier: MIT */
/*
 * fmt.h - numbers and durations as text for people: the one formatter of
 * the report at exit (report.c) and of every profctl view.
 *
 * prof_fmt_ns gives a duration in three significant digits: "812ns",
 * "3.41us", "12.0ms", "1.50s".  The prof_put_* build text in place, for
 * views of many rows: the same characters printf would give, without its
 * cost.  Each writes at p and returns the end; p needs room for 16 bytes
 * more than the text.  A _col variant right-aligns in width, as "%*s".
 *
 *	prof_put_u64	"%llu"
 *	prof_put_fixed	"%.*f" of x, decimals <= 3, rounded as glibc rounds
 *	prof_put_ns	prof_fmt_ns's text
 *	prof_put_name	a name, its control bytes as '?' (a newline in a
 *			name would start a line of the report's own)
 *
 * prof_out buffers such rows over a FILE.
 */
#ifndef PROF_FMT_H
#define PROF_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ns as a duration into buf (cut to len, as snprintf would); buf */
const char *prof_fmt_ns(char *buf, size_t len, __u64 ns);
/* bytes into buf (cut to len): "812", "80.0KiB", "1.5MiB", "2.0GiB"; buf */
const char *prof_fmt_bytes(char *buf, size_t len, __u64 v);
char *prof_put_u64(char *p, __u64 v);
char *prof_put_u64_col(char *p, __u64 v, unsigned int width);
char *prof_put_fixed(char *p, double x, unsigned int decimals);
char *prof_put_fixed_col(char *p, double x, unsigned int decimals, unsigned int width);
char *prof_put_ns(char *p, __u64 ns);
char *prof_put_ns_col(char *p, __u64 ns, unsigned int width);
char *prof_put_name(char *p, const char *name);
/* name into buf (cut to len), its control bytes as '?'; buf */
const char *prof_fmt_name(char *buf, size_t len, const char *name);

/*
 * A time as every option that takes one spells it (profctl's, profd's
 * --history): a decimal number and a unit, ns, us, ms, s, m or h, seconds
 * without one ("10s", "2m", "0.5", "16ms"), above 0 and at most 7 days.
 * 0 or -EINVAL
 */
int prof_parse_duration(const char *s, __u64 *ns);
/* a yes or no as every PROF* variable spells it (usdt/env.c): 1, yes,
 * true, on; 0, no, false, off (any case).  0 or -EINVAL, *out untouched */
int prof_env_parse_flag(const char *s, bool *out);

/*
 * Room for one more element in an array v of n (cap allocated, each size
 * bytes): v itself while there is, else v moved to twice the room (first
 * at the start).  NULL, with v and *cap untouched, if out of memory.
 */
void *prof_grow(void *v, size_t n, size_t *cap, size_t size, size_t first);
/* the same for room for need elements: the room doubled (from first) until
 * it holds them */
void *prof_grow_to(void *v, size_t need, size_t *cap, size_t size, size_t first);
/* v (*n elements, each size bytes) at least want long, the new ones zero
 * and *n their count: v itself if it was, else v moved; NULL, with v and
 * *n untouched, if out of memory */
void *prof_grow_zero(void *v, __u32 *n, __u32 want, size_t size);

/* two numbers' order for qsort: -1, 0 or 1 (a ?: chain orders by several) */
#define PROF_CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* an output buffer over a FILE: rows are built in it, written in big chunks */
#define PROF_OUT_ROW	2048	/* a row built at p may take this much */
struct prof_out {
	FILE *f;
	char *p, *end;
	char buf[1 << 16];
};
void prof_out_init(struct prof_out *o, FILE *f);
void prof_out_flush(struct prof_out *o);
/* room for PROF_OUT_ROW bytes at o->p */
static inline char *prof_out_row(struct prof_out *o)
{
	if ((size_t)(o->end - o->p) < PROF_OUT_ROW)
		prof_out_flush(o);
	return o->p;
}
void prof_out_write(struct prof_out *o, const char *s, size_t len);
void prof_out_printf(struct prof_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif /* PROF_FMT_H */
