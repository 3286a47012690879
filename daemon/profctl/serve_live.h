/* SPDX-License-Identifier: MIT */
/*
 * serve_live.h - the live page's routes (serve_live.c), which
 * profctl_serve.c's handler asks before its own.
 */
#ifndef SERVE_LIVE_H
#define SERVE_LIVE_H

#include "profctl.h"

struct pc_live_reply {
	unsigned int code;	/* HTTP status */
	const char *type;	/* Content-Type */
	char *body;		/* malloc'd, len bytes */
	size_t len;
	const char *error;	/* the body says it, as {"error":...} */
	char filename[PROF_COMM_MAX + 32]; /* a download's, or "" */
};

/*
 * url's answer if it is the page's (/, /p/PID, /api/...): 1, r filled
 * (its body the caller's to free); 0 if not the page's; -ENOMEM.  window,
 * last and max are the query's values, NULL when absent.
 */
int pc_live_route(const char *url, const char *window, const char *last, const char *max,
		  const struct pc_serve_opts *o, struct pc_live_reply *r);

/* what the routes keep between requests (a source, reads of processes),
 * dropped; the next request starts afresh */
void pc_live_close(void);

#endif /* SERVE_LIVE_H */
