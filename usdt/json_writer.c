// SPDX-License-Identifier: MIT
/*
 * json_writer.c - the one JSON writer and its string escaper; see
 * json_writer.h.
 */
#include <errno.h>
#include <string.h>

#include "fmt.h"
#include "json_writer.h"

static const char hex[] = "0123456789abcdef";

/* the length of the valid UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if there is none */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	/* the string's NUL ends a cut sequence: it is no continuation */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

char *prof_json_esc_body(char *p, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		unsigned char c = *s;
		size_t n;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
			s++;
			continue;
		}
		if (c >= 0x20 && c < 0x7f && c != '<' && c != '>' && c != '&') {
			*p++ = (char)c;
			s++;
			continue;
		}
		n = c > 0x7f ? utf8_len(s) : 0;
		if (n) {
			memcpy(p, s, n);
			p += n;
			s += n;
			continue;
		}
		/* control bytes, DEL, <>&, and a byte of no valid sequence */
		memcpy(p, "\\u00", 4);
		p[4] = hex[c >> 4];
		p[5] = hex[c & 15];
		p += 6;
		s++;
	}
	return p;
}

char *prof_json_esc(char *p, const char *s)
{
	*p++ = '"';
	p = prof_json_esc_body(p, s);
	*p++ = '"';
	return p;
}

void prof_json_fbody(FILE *f, const char *s)
{
	char buf[1024], part[168];
	size_t n = strlen(s);

	/* most strings are names, far below a part; longer ones in parts cut
	 * between whole UTF-8 sequences */
	while (n) {
		size_t k = n < 160 ? n : 160;

		while (k < n && k > 160 - 4 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		memcpy(part, s, k);
		part[k] = '\0';
		fwrite(buf, 1, (size_t)(prof_json_esc_body(buf, part) - buf), f);
		s += k;
		n -= k;
	}
}

void prof_json_fstr(FILE *f, const char *s)
{
	fputc('"', f);
	prof_json_fbody(f, s);
	fputc('"', f);
}

void prof_jw_init(struct prof_jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->first[0] = true;
}

/* the comma before a value (or before whitespace leading to one) */
static void sep(struct prof_jw *w)
{
	if (w->named || w->spaced) {
		w->named = false;
		w->spaced = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void jw_open(struct prof_jw *w, char c)
{
	sep(w);
	fputc(c, w->f);
	if (w->depth + 1 < PROF_JW_DEPTH_MAX)
		w->depth++;
	w->first[w->depth] = true;
}

static void jw_close(struct prof_jw *w, char c)
{
	w->spaced = false;
	w->named = false;
	if (w->depth)
		w->depth--;
	fputc(c, w->f);
}

void prof_jw_start_object(struct prof_jw *w)
{
	jw_open(w, '{');
}

void prof_jw_end_object(struct prof_jw *w)
{
	jw_close(w, '}');
}

void prof_jw_start_array(struct prof_jw *w)
{
	jw_open(w, '[');
}

void prof_jw_end_array(struct prof_jw *w)
{
	jw_close(w, ']');
}

void prof_jw_name(struct prof_jw *w, const char *name)
{
	sep(w);
	prof_json_fstr(w->f, name);
	fputc(':', w->f);
	w->named = true;
}

void prof_jw_string(struct prof_jw *w, const char *s)
{
	sep(w);
	prof_json_fstr(w->f, s);
}

void prof_jw_u64(struct prof_jw *w, __u64 v)
{
	char buf[24];

	sep(w);
	fwrite(buf, 1, (size_t)(prof_put_u64(buf, v) - buf), w->f);
}

void prof_jw_int(struct prof_jw *w, long long v)
{
	sep(w);
	fprintf(w->f, "%lld", v);
}

void prof_jw_bool(struct prof_jw *w, bool v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void prof_jw_null(struct prof_jw *w)
{
	sep(w);
	fputs("null", w->f);
}

void prof_jw_double(struct prof_jw *w, const char *fmt, double v)
{
	sep(w);
	fprintf(w->f, fmt, v);
}

void prof_jw_ws(struct prof_jw *w, const char *ws)
{
	sep(w);
	w->spaced = true;
	fputs(ws, w->f);
}

void prof_jw_raw(struct prof_jw *w, const char *text)
{
	fputs(text, w->f);
}

void prof_jw_string_field(struct prof_jw *w, const char *name, const char *s)
{
	prof_jw_name(w, name);
	prof_jw_string(w, s);
}

void prof_jw_u64_field(struct prof_jw *w, const char *name, __u64 v)
{
	prof_jw_name(w, name);
	prof_jw_u64(w, v);
}

void prof_jw_bool_field(struct prof_jw *w, const char *name, bool v)
{
	prof_jw_name(w, name);
	prof_jw_bool(w, v);
}

int prof_jw_error(const struct prof_jw *w)
{
	return ferror(w->f) ? -EIO : 0;
}
