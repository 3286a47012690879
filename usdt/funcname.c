// SPDX-License-Identifier: MIT
/*
 * funcname.c - a C++ function's name, as its user reads it, from
 * __PRETTY_FUNCTION__ (see funcname.h).  gcc and clang spell it apart:
 *
 *	gcc	"U geo::Box<T>::g(U) [with U = long int; int N = 3; T = int]"
 *	clang	"U geo::Box<int>::g(U) [T = int, U = long, N = 3]"
 *
 * gcc leaves the scope's template parameters as names, listed among the
 * rest: those are put in place, and what is left is the function's own
 * template arguments.  clang puts the scope's in place and lists them
 * first: as many as the scope has are skipped.  Both give
 * "geo::Box<int>::g<long, 3>".
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include "funcname.h"

#define WORK 512 /* longer names are cut: a zone's name is shorter still */
#define MAX_ARGS 16

struct targ {
	const char *name, *value;
	size_t name_len;
	bool used;
};

static bool ident_ch(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool word_at(const char *s, size_t i, const char *word)
{
	size_t k = strlen(word);

	return !strncmp(s + i, word, k) && (i == 0 || !ident_ch(s[i - 1])) && !ident_ch(s[i + k]);
}

/* where the bracket closing at s[end - 1] opens; -1 if nowhere */
static long open_of(const char *s, size_t end, char open, char close)
{
	int depth = 0;
	size_t i;

	for (i = end; i-- > 0;) {
		if (s[i] == close)
			depth++;
		else if (s[i] == open && --depth == 0)
			return (long)i;
	}
	return -1;
}

static int depth_step(char c)
{
	if (c == '(' || c == '<' || c == '[' || c == '{')
		return 1;
	if (c == ')' || c == '>' || c == ']' || c == '}')
		return -1;
	return 0;
}

/* gcc's spellings of the integer types as C++ users write them */
static void short_types(char *s)
{
	static const char *const from[] = {
		"long long unsigned int", "long unsigned int", "short unsigned int",
		"long long int",	  "long int",	       "short int"
	};
	static const char *const to[] = { "unsigned long long", "unsigned long", "unsigned short",
					  "long long",		"long",		 "short" };
	size_t k, i;

	for (k = 0; k < sizeof(from) / sizeof(from[0]); k++)
		for (i = 0; s[i]; i++)
			if (word_at(s, i, from[k])) {
				size_t fl = strlen(from[k]), tl = strlen(to[k]);

				memcpy(s + i, to[k], tl);
				memmove(s + i + tl, s + i + fl, strlen(s + i + fl) + 1);
			}
}

/* "[with T = double; int N = 3]" or "[T = double, N = 3]" into a, cut in place */
static size_t parse_targs(char *list, bool gnu, struct targ *a)
{
	size_t n = 0;
	char *p = list;

	while (*p && n < MAX_ARGS) {
		char *end = NULL, *eq, *q, *name;
		int depth = 0;

		for (q = p; *q; q++) {
			depth += depth_step(*q);
			if (depth == 0 &&
			    (gnu ? (q[0] == ';' && q[1] == ' ') : (q[0] == ',' && q[1] == ' '))) {
				end = q;
				break;
			}
		}
		if (end)
			*end = '\0';
		eq = strstr(p, " = ");
		if (eq) {
			size_t vl;

			*eq = '\0';
			/* "int N": the parameter's name is the last word */
			name = strrchr(p, ' ');
			name = name ? name + 1 : p;
			a[n].name = name;
			a[n].name_len = strlen(name);
			a[n].value = eq + 3;
			a[n].used = false;
			/* a pack: gcc's "{int, double}", clang's "<int, double>" */
			vl = strlen(eq + 3);
			if (vl >= 2 && ((eq[3] == '{' && eq[3 + vl - 1] == '}') ||
					(eq[3] == '<' && eq[3 + vl - 1] == '>'))) {
				eq[3 + vl - 1] = '\0';
				a[n].value = eq + 4;
			}
			short_types(eq + 3);
			n++;
		}
		if (!end)
			break;
		p = end + 2;
	}
	return n;
}

static void put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	while (n-- && *at + 1 < len)
		buf[(*at)++] = *s++;
	buf[*at < len ? *at : len - 1] = '\0';
}

/* template arguments of the scope (before the last "::" outside brackets) */
static size_t scope_targs(const char *name, size_t n)
{
	size_t i, last = 0, count = 0;
	int depth = 0;

	for (i = 0; i + 1 < n; i++) {
		if (word_at(name, i, "operator"))
			break;
		depth += depth_step(name[i]);
		if (depth == 0 && name[i] == ':' && name[i + 1] == ':')
			last = i;
	}
	for (i = 0, depth = 0; i < last; i++) {
		if (name[i] == '<' && depth == 0)
			count++;
		else if (name[i] == ',' && depth == 1)
			count++;
		depth += depth_step(name[i]);
	}
	return count;
}

/*
 * A lambda's or a local class's enclosing function keeps its parameter
 * list in the name (gcc: "f(void**)::<lambda()>", clang: "f(void **)::
 * (anonymous class)::operator()"): dropped, as a C++ user names the scope
 * ("f::<lambda()>").  Its new length.
 */
static size_t drop_scope_params(char *name, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n;) {
		if (name[i] == '(' && strncmp(name + i, "(anonymous ", 11)) {
			size_t j;
			int d = 0;

			for (j = i; j < n; j++) {
				d += name[j] == '(' ? 1 : name[j] == ')' ? -1 : 0;
				if (!d)
					break;
			}
			if (j < n && j + 2 < n && name[j + 1] == ':' && name[j + 2] == ':') {
				i = j + 1;
				continue;
			}
		}
		name[o++] = name[i++];
	}
	name[o] = '\0';
	return o;
}

/*
 * w[0..n) with its trailing template argument list ("[with T = int]" of gcc,
 * "[T = int]" of clang) cut off: returns the new length, *list the list (NULL
 * if none), *gnu whether it is gcc's
 */
static size_t cut_targs(char *w, size_t n, char **list, bool *gnu)
{
	*list = NULL;
	*gnu = false;
	if (n && w[n - 1] == ']') {
		long o = open_of(w, n, '[', ']');

		if (o > 0 && w[o - 1] == ' ') {
			w[n - 1] = '\0';
			*list = w + o + 1;
			*gnu = !strncmp(*list, "with ", 5);
			if (*gnu)
				*list += 5;
			n = (size_t)o - 1;
			w[n] = '\0';
		}
	}
	return n;
}

/* w[0..n) without the qualifiers after the parameter list, then the list */
static size_t cut_params(char *w, size_t n)
{
	bool more;

	for (more = true; more;) {
		static const char *const quals[] = { "const", "volatile", "noexcept", "&&", "&" };
		size_t k;

		more = false;
		while (n && w[n - 1] == ' ')
			w[--n] = '\0';
		for (k = 0; k < sizeof(quals) / sizeof(quals[0]); k++) {
			size_t ql = strlen(quals[k]);

			if (n > ql && !strcmp(w + n - ql, quals[k]) &&
			    (quals[k][0] == '&' || w[n - ql - 1] == ' ' || w[n - ql - 1] == ')')) {
				n -= ql;
				w[n] = '\0';
				more = true;
				break;
			}
		}
	}
	if (n && w[n - 1] == ')') {
		long o = open_of(w, n, '(', ')');

		if (o > 0) {
			n = (size_t)o;
			w[n] = '\0';
		}
	}
	return n;
}

void prof_func_name(const char *pretty, char *buf, size_t len)
{
	char w[WORK], *name, *list;
	struct targ a[MAX_ARGS];
	size_t n, i, start = 0, nargs = 0, at = 0, skip = 0;
	bool gnu, more;
	int depth = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (!pretty)
		return;
	if (!strchr(pretty, '(')) {
		put(buf, len, &at, pretty, strlen(pretty));
		return;
	}
	n = strlen(pretty);
	if (n >= sizeof(w))
		n = sizeof(w) - 1;
	memcpy(w, pretty, n);
	w[n] = '\0';

	n = cut_targs(w, n, &list, &gnu);
	n = cut_params(w, n);
	/* the return type ends at the last space outside brackets */
	for (i = 0; i < n; i++) {
		if (word_at(w, i, "operator"))
			break;
		depth += depth_step(w[i]);
		if (depth < 0)
			depth = 0;
		if (depth == 0 && w[i] == ' ')
			start = i + 1;
	}
	name = w + start;
	n -= start;
	n = drop_scope_params(name, n);

	if (list)
		nargs = parse_targs(list, gnu, a);
	if (!gnu)
		skip = scope_targs(name, n);
	for (i = 0, depth = 0; i < n;) {
		size_t k, t;

		if (!strncmp(name + i, "{anonymous}", 11)) {
			put(buf, len, &at, "(anonymous namespace)", 21);
			i += 11;
			continue;
		}
		if (word_at(name, i, "operator")) {
			put(buf, len, &at, name + i, n - i);
			break;
		}
		if (!ident_ch(name[i])) {
			depth += depth_step(name[i]);
			put(buf, len, &at, name + i++, 1);
			continue;
		}
		for (t = i; t < n && ident_ch(name[t]); t++)
			;
		/* gcc: a scope's template parameter, by its name */
		for (k = 0; gnu && depth > 0 && k < nargs; k++)
			if (a[k].name_len == t - i && !strncmp(a[k].name, name + i, t - i))
				break;
		if (gnu && depth > 0 && k < nargs) {
			put(buf, len, &at, a[k].value, strlen(a[k].value));
			a[k].used = true;
		} else {
			put(buf, len, &at, name + i, t - i);
		}
		i = t;
	}
	/* the rest are the function's own */
	for (i = skip, more = false; i < nargs; i++) {
		if (a[i].used)
			continue;
		put(buf, len, &at, more ? ", " : "<", more ? 2 : 1);
		put(buf, len, &at, a[i].value, strlen(a[i].value));
		more = true;
	}
	if (more)
		put(buf, len, &at, ">", 1);
}
