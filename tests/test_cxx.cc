// SPDX-License-Identifier: MIT
/*
 * test_cxx.cc - the C++ form: PROF_USDT, PROF_FUNC and PROF_SCOPE as RAII
 * objects, in functions, member functions and lambdas; a zone left by an
 * exception is still counted and the current node is restored, so later
 * zones land under the right parent.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdexcept>
#include <string>
#include <string.h>

/* cmocka.h has no extern "C" of its own */
extern "C" {
#include <cmocka.h>
}

#include "fastpath.h"
#include "funcname.h"
#include "prof.h"

PROF_DEFINE(cxx_public);

/* a zone in a named namespace: its symbols must not be mangled */
namespace cxxns {
int named_ns_zone(int i);
int named_ns_zone(int i)
{
	PROF_USDT(cxx_named_ns);
	return i + 1;
}
} // namespace cxxns

/* PROF_FUNC sites in a namespace, a class, templates (zones_cxx.cc) */
extern "C" long zones_cxx_run(void);

namespace {

struct Widget {
	int n = 0;
	void poke()
	{
		PROF_FUNC();
		n++;
	}
};

void cxx_public_a()
{
	PROF_SCOPE(cxx_public);
}

void cxx_public_b()
{
	PROF_SCOPE(cxx_public);
}

[[noreturn]] void cxx_throw(int i)
{
	PROF_USDT(cxx_thrower);
	throw std::runtime_error("boom " + std::to_string(i));
}

void cxx_catch_here(int i)
{
	PROF_USDT(cxx_catcher);
	try {
		PROF_USDT(cxx_try);
		cxx_throw(i);
	} catch (const std::runtime_error &) {
		/* back in cxx_catcher: this lands under it */
		PROF_USDT(cxx_handler);
	}
	PROF_USDT(cxx_after);
}

struct Result {
	__u32 tid = 0;
	int caught_outside = 0;
};

void *cxx_main(void *arg)
{
	Result *r = static_cast<Result *>(arg);
	Widget w;

	r->tid = test_gettid();
	for (int i = 0; i < 10; i++) {
		PROF_USDT(cxx_loop);
		w.poke();
		cxx_public_a();
		cxx_public_b();
		cxx_catch_here(i);
		auto lambda = [&]() {
			PROF_USDT(cxx_lambda);
			return i;
		};
		lambda();
		cxxns::named_ns_zone(i);
		{
			PROF_USDT(cxx_names);
			assert_int_equal(zones_cxx_run(), 1 + 3 + 7 + 3);
		}
	}
	/* an exception that leaves several zones at once */
	try {
		PROF_USDT(cxx_unwound_outer);
		{
			PROF_USDT(cxx_unwound_inner);
			cxx_throw(-1);
		}
	} catch (const std::exception &) {
		r->caught_outside++;
	}
	{
		PROF_USDT(cxx_top_after);
	}
	return nullptr;
}

} // namespace

static __u32 child(const prof_snapshot *s, const prof_snap_thread *t, __u32 parent,
		   const char *name)
{
	__u32 n = test_child(s, t, parent, name);

	if (n == PROF_SNAP_NONE)
		fail_msg("no %s under node %u", name, parent);
	return n;
}

static void test_cxx_zones(void **state)
{
	Result r;
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, nullptr, cxx_main, &r), 0);
	assert_int_equal(pthread_join(th, nullptr), 0);
	assert_int_equal(r.caught_outside, 1);

	prof_snapshot *s = test_snapshot(0);
	assert_non_null(s);
	const prof_snap_thread *t = test_thread(s, r.tid);
	assert_non_null(t);

	__u32 loop = child(s, t, PROF_NODE_ROOT, "cxx_loop");
	assert_int_equal(t->nodes[loop].calls, 10);
	__u32 poke = child(s, t, loop, "(anonymous namespace)::Widget::poke");
	assert_int_equal(t->nodes[poke].calls, 10);
	assert_true(s->sites[t->nodes[poke].site].flags & PROF_SITE_FUNC);
	/* one row per function, each named in full: not "build", one "sum" */
	__u32 names = child(s, t, loop, "cxx_names");
	assert_int_equal(t->nodes[child(s, t, names, "geo::Mesh::build")].calls, 10);
	assert_int_equal(t->nodes[child(s, t, names, "geo::sum<double>")].calls, 10);
	assert_int_equal(t->nodes[child(s, t, names, "geo::sum<long>")].calls, 10);
	assert_int_equal(t->nodes[child(s, t, names, "geo::Box<short>::scaled<long, 3>")].calls,
			 10);
	assert_string_equal(s->sites[t->nodes[child(s, t, names, "geo::sum<long>")].site].func,
			    "sum");
	__u32 pub = child(s, t, loop, "cxx_public");
	assert_int_equal(t->nodes[pub].calls, 20);
	assert_int_equal(test_count_named(s, t, "cxx_public"), 1);
	assert_int_equal(t->nodes[child(s, t, loop, "cxx_lambda")].calls, 10);
	assert_int_equal(t->nodes[child(s, t, loop, "cxx_named_ns")].calls, 10);

	/* the exception path: every zone it left counted once */
	__u32 catcher = child(s, t, loop, "cxx_catcher");
	assert_int_equal(t->nodes[catcher].calls, 10);
	__u32 tr = child(s, t, catcher, "cxx_try");
	assert_int_equal(t->nodes[tr].calls, 10);
	assert_int_equal(t->nodes[child(s, t, tr, "cxx_thrower")].calls, 10);
	/* and the current node came back to cxx_catcher */
	assert_int_equal(t->nodes[child(s, t, catcher, "cxx_handler")].calls, 10);
	assert_int_equal(t->nodes[child(s, t, catcher, "cxx_after")].calls, 10);
	assert_int_equal(test_count_named(s, t, "cxx_handler"), 1);
	assert_int_equal(test_count_named(s, t, "cxx_after"), 1);

	__u32 uo = child(s, t, PROF_NODE_ROOT, "cxx_unwound_outer");
	__u32 ui = child(s, t, uo, "cxx_unwound_inner");
	assert_int_equal(t->nodes[uo].calls, 1);
	assert_int_equal(t->nodes[ui].calls, 1);
	assert_int_equal(t->nodes[child(s, t, ui, "cxx_thrower")].calls, 1);
	assert_int_equal(t->nodes[child(s, t, PROF_NODE_ROOT, "cxx_top_after")].calls, 1);
	assert_int_equal(t->unbalanced, 0);
	assert_int_equal(t->nodes[1].calls, 0);
	prof_snapshot__destroy(s);
}

/* gcc's and clang's __PRETTY_FUNCTION__ give the same names */
static void test_cxx_pretty_names(void **state)
{
	static const char *const cases[][2] = {
		{ "T geo::sum(const T*, int) [with T = double]", "geo::sum<double>" },
		{ "T geo::sum(const T *, int) [T = double]", "geo::sum<double>" },
		{ "T geo::sum(const T*, int) [with T = long int]", "geo::sum<long>" },
		{ "T geo::sum(const T*, int) [with T = long unsigned int]",
		  "geo::sum<unsigned long>" },
		{ "T geo::sum(const T *, int) [T = long]", "geo::sum<long>" },
		{ "void geo::Box<T>::f() [with T = int]", "geo::Box<int>::f" },
		{ "void geo::Box<int>::f() [T = int]", "geo::Box<int>::f" },
		{ "U geo::Box<T>::g(U) [with U = long int; int N = 3; T = int]",
		  "geo::Box<int>::g<long, 3>" },
		{ "U geo::Box<int>::g(U) [T = int, U = long, N = 3]", "geo::Box<int>::g<long, 3>" },
		{ "static int geo::Box<T>::h() [with T = short int]", "geo::Box<short>::h" },
		{ "U m::Map<std::pair<int, int>, V>::at(U) [K = std::pair<int, int>, V = char, "
		  "U = int]",
		  "m::Map<std::pair<int, int>, V>::at<int>" },
		{ "void geo::va(A ...) [with A = {int, double}]", "geo::va<int, double>" },
		{ "void geo::va(A...) [A = <int, double>]", "geo::va<int, double>" },
		{ "geo::Mesh::Mesh()", "geo::Mesh::Mesh" },
		{ "virtual geo::Mesh::~Mesh()", "geo::Mesh::~Mesh" },
		{ "void geo::Mesh::build() const", "geo::Mesh::build" },
		{ "const char* std::vector<int>::data() const &", "std::vector<int>::data" },
		{ "void geo::Mesh::operator()()", "geo::Mesh::operator()" },
		{ "bool geo::Mesh::operator<(const geo::Mesh&) const", "geo::Mesh::operator<" },
		{ "geo::Mesh::operator int()", "geo::Mesh::operator int" },
		{ "int geo::Mesh::operator int()", "geo::Mesh::operator int" },
		{ "void {anonymous}::f(int)", "(anonymous namespace)::f" },
		{ "void (anonymous namespace)::f(int)", "(anonymous namespace)::f" },
		{ "test_overloads(void**)::<lambda()>", "test_overloads::<lambda()>" },
		{ "auto test_overloads(void **)::(anonymous class)::operator()() const",
		  "test_overloads::(anonymous class)::operator()" },
		{ "main", "main" },
	};
	char buf[PROF_NAME_MAX], tiny[5];

	(void)state;
	for (const auto &c : cases) {
		prof_func_name(c[0], buf, sizeof(buf));
		if (strcmp(buf, c[1]))
			fail_msg("\"%s\" named \"%s\", not \"%s\"", c[0], buf, c[1]);
	}
	/* cut to the buffer, terminated */
	prof_func_name("void geo::Mesh::build()", tiny, sizeof(tiny));
	assert_string_equal(tiny, "geo:");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_zones),
		cmocka_unit_test(test_cxx_pretty_names),
	};

	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
