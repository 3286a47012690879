// SPDX-License-Identifier: MIT
/*
 * zones_cxx.cc - C++ PROF_FUNC sites, each to be named as C++ names it,
 * in reports (test_cxx) and by `profctl zones` (test_profctl): a member
 * function, a function template in two instances, a member template of
 * a class template.  Linked by the C compiler too: no exceptions.
 */
#include "prof.h"

extern "C" long zones_cxx_run(void);

namespace geo {
struct Mesh {
	long built = 0;
	void build()
	{
		PROF_FUNC();
		built++;
	}
};

template <class T> T sum(const T *v, int n)
{
	PROF_FUNC();
	T s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

template <class T> struct Box {
	template <class U, int N> U scaled(U u)
	{
		PROF_FUNC();
		return u * N;
	}
};
} // namespace geo

long zones_cxx_run(void)
{
	geo::Mesh m;
	geo::Box<short> b;
	double d[2] = { 1, 2 };
	long l[2] = { 3, 4 };

	m.build();
	return m.built + static_cast<long>(geo::sum(d, 2)) + geo::sum(l, 2) +
	       b.scaled<long, 3>(1L);
}
