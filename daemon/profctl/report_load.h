/* SPDX-License-Identifier: MIT */
/*
 * report_load.h - a JSON report read back into a snapshot.
 *
 * `profctl report --format json` and PROF_REPORT_FORMAT=json write the
 * call tree as JSON (docs/reports.md, tests/report.schema.json); `report --input`
 * reads such a file into the snapshot every view renders, as it reads a
 * saved profile.  The text is distrusted as a segment is: every field is
 * checked for its type and range, names for their length, histograms for
 * their buckets, and anything else is refused with one line saying what.
 *
 * Times come back from their ns at the report's tick rate: a node's own
 * values are the report's exactly; sums over nodes (flat, --threads) can
 * differ from the live report's by the ns rounding of each node's value
 * when the clock is not ns (tsc).
 */
#ifndef PROF_REPORT_LOAD_H
#define PROF_REPORT_LOAD_H

#include <stddef.h>
#include "snapshot.h"

/* true if buf starts (after blanks) like a JSON document */
int prof_json_is(const void *buf, size_t len);
/*
 * The one process of a tree report (buf, len bytes) as a snapshot, not
 * lazy, every histogram kept.  0, or -errno with why (a line, no newline)
 * saying what is wrong: -EINVAL corrupt or truncated, -EPROTO another
 * version or a view without the tree, -ENOMEM.
 */
int prof_json_load(const void *buf, size_t len, struct prof_snapshot **snap, char *why,
		   size_t whylen);

#endif /* PROF_REPORT_LOAD_H */
