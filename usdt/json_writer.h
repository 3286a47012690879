/* SPDX-License-Identifier: MIT */
/*
 * json_writer.h - the one JSON writer: every JSON the runtime (the report
 * at exit) and profctl (its views, list, diff, the html page's data)
 * write goes through it, so a name reads the same in all of them.
 *
 * Its shape is bpftool's json_writer: a writer over a FILE that knows
 * where commas go, values named inside objects.  Whitespace is the
 * caller's (prof_jw_ws, between the comma and the next value), so each
 * output keeps its own layout.  Strings have one escaper, which also
 * serves the renderers that build rows in memory (prof_json_esc):
 *
 *	"  \\  and control bytes escaped (\" \\ \u00XX), DEL too;
 *	<  >  & as \u003c \u003e \u0026 (JSON inside an html page stays data);
 *	valid UTF-8 as it is; a byte that is not part of valid UTF-8 as
 *	\u00XX of its value, so the output is valid UTF-8 whatever a name holds.
 *
 *	prof_jw_init(&w, f)			a writer over f, at the top level
 *	prof_jw_start_object(&w) .. end		{ }, prof_jw_start_array: [ ]
 *	prof_jw_name(&w, "key")			the next value's name in an object
 *	prof_jw_string/u64/int/bool/null	values
 *	prof_jw_ws(&w, "\n  ")			whitespace before the next value
 *	prof_jw_raw(&w, "\n")			text as it is (before an end)
 */
#ifndef PROF_JSON_WRITER_H
#define PROF_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the bytes prof_json_esc may write for a string of n bytes, quotes too */
#define PROF_JSON_ESC_MAX(n) (6 * (size_t)(n) + 2)

/* s as a JSON string, quoted, at p; the end of what was written */
char *prof_json_esc(char *p, const char *s);
/* the same without the quotes (a string built of parts) */
char *prof_json_esc_body(char *p, const char *s);
/* s as a JSON string, quoted, to f */
void prof_json_fstr(FILE *f, const char *s);
/* the same without the quotes */
void prof_json_fbody(FILE *f, const char *s);

#define PROF_JW_DEPTH_MAX 16

struct prof_jw {
	FILE *f;
	unsigned int depth;
	bool named;  /* a name was written: its value needs no comma */
	bool spaced; /* prof_jw_ws wrote the comma already */
	bool first[PROF_JW_DEPTH_MAX];
};

void prof_jw_init(struct prof_jw *w, FILE *f);
void prof_jw_start_object(struct prof_jw *w);
void prof_jw_end_object(struct prof_jw *w);
void prof_jw_start_array(struct prof_jw *w);
void prof_jw_end_array(struct prof_jw *w);
void prof_jw_name(struct prof_jw *w, const char *name);
void prof_jw_string(struct prof_jw *w, const char *s);
void prof_jw_u64(struct prof_jw *w, __u64 v);
void prof_jw_int(struct prof_jw *w, long long v);
void prof_jw_bool(struct prof_jw *w, bool v);
void prof_jw_null(struct prof_jw *w);
/* a number printed with fmt (one double), for fractions */
void prof_jw_double(struct prof_jw *w, const char *fmt, double v);
/* whitespace before the next value: the comma, if one is due, first */
void prof_jw_ws(struct prof_jw *w, const char *ws);
/* text as it is (whitespace before the end of a container) */
void prof_jw_raw(struct prof_jw *w, const char *text);
/* name: value shorthands */
void prof_jw_string_field(struct prof_jw *w, const char *name, const char *s);
void prof_jw_u64_field(struct prof_jw *w, const char *name, __u64 v);
void prof_jw_bool_field(struct prof_jw *w, const char *name, bool v);
/* 0, or -EIO if writing failed */
int prof_jw_error(const struct prof_jw *w);

#ifdef __cplusplus
}
#endif

#endif /* PROF_JSON_WRITER_H */
