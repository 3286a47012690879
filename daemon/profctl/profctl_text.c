// SPDX-License-Identifier: MIT
/*
 * profctl_text.c - a name made safe for each output's syntax: a CSV field,
 * a folded frame, an OpenMetrics label value.  Every renderer and verb
 * may use them; they call nothing of profctl's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "profctl.h"

void pc_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * A folded line is "frame;frame;... count": a name's control byte (a
 * newline would start a line of its own) goes as '_', and so does a ';'
 * in a thread's label (it would read as one more frame).  Zone names are
 * identifiers in a live process, but a file or a JSON report read back
 * may hold any bytes.
 */
static bool folded_bad(char c, bool semicolon)
{
	return (unsigned char)c < 0x20 || c == 0x7f || (semicolon && c == ';');
}

void pc_folded_safe(char *s, bool semicolon)
{
	for (; *s; s++)
		if (folded_bad(*s, semicolon))
			*s = '_';
}

bool pc_folded_needs(const char *s)
{
	for (; *s; s++)
		if (folded_bad(*s, false))
			return true;
	return false;
}

/* an OpenMetrics label value: backslash, double quote and newline escaped */
void pc_om_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}
