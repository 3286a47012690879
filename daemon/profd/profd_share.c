// SPDX-License-Identifier: MIT
/*
 * profd_share.c - fair shares among uids: a list of the uids holding
 * places (connections, followed processes), sorted, so that how many one
 * uid holds is a search.  What profd_ctl.c and profd_discover.c each ask
 * when every place is taken and a newcomer comes: it calls none of profd's
 * other files.
 */
#include <stdlib.h>
#include "profd.h"

static int uid_cmp(const void *a, const void *b)
{
	uid_t x = *(const uid_t *)a, y = *(const uid_t *)b;

	return x < y ? -1 : x > y;
}

void profd_uid_sort(uid_t *u, __u32 n)
{
	qsort(u, n, sizeof(*u), uid_cmp);
}

__u32 profd_uid_run(const uid_t *u, __u32 n, uid_t uid)
{
	const uid_t *p = bsearch(&uid, u, n, sizeof(*u), uid_cmp);
	const uid_t *lo = p, *hi = p;

	if (!p)
		return 0;
	while (lo > u && lo[-1] == uid)
		lo--;
	while (hi < u + n && *hi == uid)
		hi++;
	return (__u32)(hi - lo);
}
