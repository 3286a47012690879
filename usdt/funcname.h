/* SPDX-License-Identifier: MIT */
/*
 * funcname.h - a C++ PROF_FUNC zone's name as a C++ user reads it, from
 * the __PRETTY_FUNCTION__ its site carries: the return type and the
 * parameter list dropped, namespaces, classes and template arguments
 * kept, as gcc and clang both spell them:
 *
 *	"T geo::sum(const T*, int) [with T = long int]"	-> "geo::sum<long>"
 *	"void geo::Mesh::build() const"			-> "geo::Mesh::build"
 *
 * Run once per site when it registers (and by profctl zones on a binary),
 * never on the fast path.
 */
#ifndef PROF_FUNCNAME_H
#define PROF_FUNCNAME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the name of pretty into buf (cut to len); a C name (no '(') as it is */
void prof_func_name(const char *pretty, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PROF_FUNCNAME_H */
