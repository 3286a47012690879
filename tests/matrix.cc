// SPDX-License-Identifier: MIT
/*
 * matrix.cc - every macro of prof.h in C++, in every kind of namespace and
 * template: named, nested, anonymous and inline namespaces, function and
 * class templates, member templates, static members, lambdas (generic ones
 * from C++14).  test_compilers builds it with g++ and clang++ at -std=c++11,
 * c++17 and c++20 with -Wall -Wextra -Wpedantic -Werror, runs it, and reads
 * its report: each zone named in EXPECT below is called ROUNDS times.
 */
#include <cstdio>
#include <string>
#include <vector>

#include "prof.h"

#define ROUNDS 5

static volatile unsigned long sink;

namespace geo {
PROF_DEFINE(cx_public);

template <class T> T cx_ftmpl(T x)
{
	PROF_USDT(cx_ftmpl);
	return x + 1;
}

template <class T> struct box {
	T v;
	T get() const
	{
		PROF_USDT(cx_member);
		return v;
	}
	template <class U> U conv() const
	{
		PROF_USDT(cx_member_tmpl);
		return static_cast<U>(v);
	}
	static T twice(T x)
	{
		PROF_FUNC();
		return 2 * x;
	}
};

namespace inner {
namespace deeper {
inline unsigned long cx_nested(unsigned long x)
{
	PROF_USDT(cx_nested);
	return x ^ 1;
}
}
}

inline namespace v1 {
template <class T> T cx_inline_ns(T x)
{
	PROF_BEGIN(cx_begin);
	x += 3;
	PROF_END();
	return x;
}
}
}

PROF_DECLARE(cx_public);

namespace {
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
struct anon {
	unsigned long run(unsigned long x)
	{
		PROF_USDT(cx_anon);
		PROF_ALLOC(32);
		PROF_FREE(32);
		/* annotations in a member function, any arithmetic type */
		PROF_PLOT(cx_plot, x);
		PROF_PLOT(cx_plot, 2.5f);
		PROF_MESSAGE("run %lu", x);
		PROF_MESSAGE("no arguments");
		PROF_ZONE_VALUE(x);
		PROF_ZONE_TEXT("text");
		if (PROF_MUTEX_LOCK(cx_lock, &m) == 0)
			(void)PROF_MUTEX_UNLOCK(cx_lock, &m);
		PROF_LOCK_WAIT(cx_generic);
		PROF_LOCK_ACQUIRED(cx_generic);
		PROF_LOCK_RELEASED(cx_generic);
		return x + 2;
	}
};
}

namespace geo {
PROF_DECLARE(cx_public);
static unsigned long scoped(unsigned long x)
{
	PROF_SCOPE(cx_public);
	return x + 4;
}
}

int main()
{
	unsigned long acc = 0;
	geo::box<int> b = { 3 };
	anon a;
	auto lam = [&](unsigned long x) {
		PROF_USDT(cx_lambda);
		return x + acc;
	};

	PROF_THREAD_NAME("matrix++");
	for (unsigned long i = 0; i < ROUNDS; i++) {
		PROF_FRAME();
		acc += geo::cx_ftmpl<unsigned long>(i) + static_cast<unsigned long>(geo::cx_ftmpl(1.5));
		acc += static_cast<unsigned long>(b.get()) + b.conv<unsigned long>();
		acc += static_cast<unsigned long>(geo::box<int>::twice(2));
		acc += geo::inner::deeper::cx_nested(i) + geo::cx_inline_ns(i) + a.run(i);
		acc += geo::scoped(i) + lam(i);
#if __cplusplus >= 201402L
		auto gen = [](auto x) {
			PROF_USDT(cx_generic);
			return x;
		};
		acc += gen(i);
#else
		{
			PROF_USDT(cx_generic);
			acc += i;
		}
#endif
	}
	sink = acc;
	std::printf("matrix ok %lu\n", static_cast<unsigned long>(sink));
	return 0;
}
