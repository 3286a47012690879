// SPDX-License-Identifier: MIT
/*
 * fmt.c - numbers and durations as text for people: the one formatter of
 * the report at exit and of every profctl view (see fmt.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

static const char digits2[201] = "00010203040506070809"
				 "10111213141516171819"
				 "20212223242526272829"
				 "30313233343536373839"
				 "40414243444546474849"
				 "50515253545556575859"
				 "60616263646566676869"
				 "70717273747576777879"
				 "80818283848586878889"
				 "90919293949596979899";

static const __u64 pow10_tab[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

static unsigned int ndigits(__u64 v)
{
	/* floor(log10(2^bits)), then one more if v reaches that power (0
	 * counts as 1: the powers of ten past 1 are even, v | 1 crosses none) */
	__u64 w = v | 1;
	unsigned int t = ((64 - (unsigned int)__builtin_clzll(w)) * 1233) >> 12;

	return t + 1 - (w < pow10_tab[t]);
}

/* the n digits of v, ending at q */
static void put_digits(char *q, __u64 v)
{
	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		q -= 2;
		q[0] = digits2[2 * r];
		q[1] = digits2[2 * r + 1];
	}
	if (v >= 10) {
		q[-2] = digits2[2 * v];
		q[-1] = digits2[2 * v + 1];
	} else {
		q[-1] = (char)('0' + v);
	}
}

/*
 * v / 10^decimals with that many decimals, then suffix (at most 2 bytes),
 * right-aligned in width: written in place, the padding first, so nothing
 * just stored is read back.  p has room for 16 more bytes than it takes.
 */
static char *put_num(char *p, __u64 v, unsigned int decimals, const char *suffix, unsigned int slen,
		     unsigned int width)
{
	/* constant divisors: a multiply, not a divide */
	__u64 ip = decimals == 0 ? v : decimals == 1 ? v / 10 : decimals == 2 ? v / 100 : v / 1000;
	__u64 fp = v - ip * pow10_tab[decimals];
	unsigned int n = ndigits(ip), len = n + (decimals ? decimals + 1 : 0) + slen, i;

	if (len < width) {
		if (width <= 16)
			memset(p, ' ', 16);
		else
			memset(p, ' ', width - len);
		p += width - len;
	}
	put_digits(p + n, ip);
	p += n;
	if (decimals) {
		*p++ = '.';
		for (i = decimals; i-- > 0;) {
			p[i] = (char)('0' + fp % 10);
			fp /= 10;
		}
		p += decimals;
	}
	for (i = 0; i < slen; i++)
		*p++ = suffix[i];
	return p;
}

char *prof_put_u64(char *p, __u64 v)
{
	unsigned int n;

	/* most counters of most rows are 0 */
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	n = ndigits(v);
	put_digits(p + n, v);
	return p + n;
}

char *prof_put_u64_col(char *p, __u64 v, unsigned int width)
{
	return put_num(p, v, 0, "", 0, width);
}

/*
 * x * 10^decimals rounded as printf("%.*f") rounds: x is m * 2^e exactly,
 * so that is (m * 10^d) >> -e, to nearest on the exact remainder, ties to
 * even, as glibc rounds.  false for what this does not do: values from
 * 2^53 up (never a duration or a share here), negative, not finite.
 */
static bool fixed_round(double x, unsigned int decimals, __u64 *out)
{
	__u64 bits, m, a, v, rem, half;
	int e, k;

	if (!(x >= 0 && x < 9007199254740992.0) || decimals > 3)
		return false;
	memcpy(&bits, &x, sizeof(bits));
	if (bits >> 63) /* -0.0 */
		return false;
	e = (int)((bits >> 52) & 0x7ff);
	m = bits & ((1ull << 52) - 1);
	if (e == 0) {
		/* zero, or subnormal: far below a half of the last digit */
		*out = 0;
		return true;
	}
	m |= 1ull << 52;
	e -= 1075; /* x = m * 2^e, e <= 0 below 2^53 */
	a = m * pow10_tab[decimals];
	if (e >= 0) {
		v = a;
	} else if (e <= -64) {
		v = 0;
	} else {
		k = -e;
		v = a >> k;
		rem = a & ((1ull << k) - 1);
		half = 1ull << (k - 1);
		if (rem > half || (rem == half && (v & 1)))
			v++;
	}
	*out = v;
	return true;
}

char *prof_put_fixed_col(char *p, double x, unsigned int decimals, unsigned int width)
{
	char b[80];
	__u64 v;
	int n;

	if (fixed_round(x, decimals, &v))
		return put_num(p, v, decimals, "", 0, width);
	n = snprintf(b, sizeof(b), "%*.*f", (int)width, (int)decimals, x);
	memcpy(p, b, (size_t)n);
	return p + n;
}

char *prof_put_fixed(char *p, double x, unsigned int decimals)
{
	return prof_put_fixed_col(p, x, decimals, 0);
}

char *prof_put_ns_col(char *p, __u64 ns, unsigned int width)
{
	double v = (double)ns, x;
	unsigned int d;
	const char *unit;
	__u64 r;

	if (ns < 1000)
		return put_num(p, ns, 0, "ns", 2, width);
	if (ns < 1000000) {
		x = v / 1e3;
		d = v < 1e4 ? 2 : v < 1e5 ? 1 : 0;
		unit = "us";
	} else if (ns < 1000000000) {
		x = v / 1e6;
		d = v < 1e7 ? 2 : v < 1e8 ? 1 : 0;
		unit = "ms";
	} else {
		x = v / 1e9;
		d = v < 1e10 ? 2 : v < 1e11 ? 1 : 0;
		unit = "s";
	}
	/* below 2^64 / 1e9 seconds: always in fixed_round's range */
	if (!fixed_round(x, d, &r))
		r = 0;
	/* rounding up to a fourth digit (9.996us, 999.7ms): one decimal fewer,
	 * or the next unit, as the value rounded would have been shown */
	if (r >= 1000 && d) {
		d--;
		if (!fixed_round(x, d, &r))
			r = 0;
	} else if (r >= 1000 && unit[0] != 's') {
		x /= 1e3;
		d = 2;
		unit = unit[0] == 'u' ? "ms" : "s";
		if (!fixed_round(x, d, &r))
			r = 0;
	}
	return put_num(p, r, d, unit, unit[1] ? 2 : 1, width);
}

char *prof_put_ns(char *p, __u64 ns)
{
	return prof_put_ns_col(p, ns, 0);
}

/* a control byte of a name (a zone's from a file, a thread's, a comm) */
static char name_char(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
}

char *prof_put_name(char *p, const char *name)
{
	while (*name)
		*p++ = name_char(*name++);
	return p;
}

const char *prof_fmt_name(char *buf, size_t len, const char *name)
{
	size_t i;

	if (!len)
		return buf;
	for (i = 0; i + 1 < len && name[i]; i++)
		buf[i] = name_char(name[i]);
	buf[i] = 0;
	return buf;
}

const char *prof_fmt_ns(char *buf, size_t len, __u64 ns)
{
	char tmp[80];
	size_t n = (size_t)(prof_put_ns(tmp, ns) - tmp);

	/* as snprintf would: cut to fit, always terminated */
	if (!len)
		return buf;
	if (n >= len)
		n = len - 1;
	memcpy(buf, tmp, n);
	buf[n] = 0;
	return buf;
}

void prof_out_init(struct prof_out *o, FILE *f)
{
	o->f = f;
	o->p = o->buf;
	o->end = o->buf + sizeof(o->buf);
}

void prof_out_flush(struct prof_out *o)
{
	if (o->p > o->buf)
		fwrite(o->buf, 1, (size_t)(o->p - o->buf), o->f);
	o->p = o->buf;
}

void prof_out_write(struct prof_out *o, const char *s, size_t len)
{
	if ((size_t)(o->end - o->p) < len) {
		prof_out_flush(o);
		if (len > sizeof(o->buf)) {
			fwrite(s, 1, len, o->f);
			return;
		}
	}
	memcpy(o->p, s, len);
	o->p += len;
}

void prof_out_printf(struct prof_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->p, (size_t)(o->end - o->p), fmt, ap);
	va_end(ap);
	if (n >= 0 && n < o->end - o->p) {
		o->p += n;
		return;
	}
	/* did not fit: flush, then straight to the file */
	prof_out_flush(o);
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

int prof_parse_duration(const char *s, __u64 *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		      { "", 1e9 }, { "m", 60e9 },  { "h", 3600e9 } };
	size_t n = strspn(s, "0123456789."), k;
	const char *end = s + n;
	char num[32], *nend;
	double v;

	/* strtod would take "inf", "nan", hex and exponents: digits and
	 * points only, all of them read ("1.2.3" is not), then the unit */
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = 0;
	errno = 0;
	v = strtod(num, &nend);
	if (errno || *nend || v <= 0)
		return -EINVAL;
	for (k = 0; k < sizeof(units) / sizeof(units[0]); k++)
		if (!strcmp(end, units[k].unit))
			break;
	if (k == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	v *= units[k].ns;
	if (v < 1 || v > 7 * 86400e9)
		return -EINVAL;
	*ns = (__u64)v;
	return 0;
}

void *prof_grow_to(void *v, size_t need, size_t *cap, size_t size, size_t first)
{
	size_t c = *cap ? *cap : first ? first : 1;
	void *nv;

	/* nothing yet and nothing needed still gets a block: NULL says failure */
	if (v && need <= *cap)
		return v;
	while (c < need) {
		if (c > (size_t)-1 / 2)
			return NULL;
		c *= 2;
	}
	if (c > (size_t)-1 / size)
		return NULL;
	nv = realloc(v, c * size);
	if (nv)
		*cap = c;
	return nv;
}

void *prof_grow(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	return prof_grow_to(v, n + 1, cap, size, first);
}

void *prof_grow_zero(void *v, __u32 *n, __u32 want, size_t size)
{
	char *nv;

	if (want <= *n)
		return v;
	nv = realloc(v, (size_t)want * size);
	if (!nv)
		return NULL;
	memset(nv + (size_t)*n * size, 0, (size_t)(want - *n) * size);
	*n = want;
	return nv;
}

const char *prof_fmt_bytes(char *buf, size_t len, __u64 v)
{
	if (v < 1024)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (v < 1024 * 1024)
		snprintf(buf, len, "%.1fKiB", (double)v / 1024);
	else if (v < 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1fMiB", (double)v / (1024 * 1024));
	else
		snprintf(buf, len, "%.1fGiB", (double)v / (1024.0 * 1024 * 1024));
	return buf;
}
