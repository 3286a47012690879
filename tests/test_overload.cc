// SPDX-License-Identifier: MIT
/*
 * test_overload.cc - C++ zones of one name told apart: two overloads of
 * build() and two lambdas, each PROF_FUNC (so named "build" and
 * "test_overloads::<lambda()>"), show in the PROF_REPORT text report with their
 * file:line; a zone whose name nobody else has shows without.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string>

/* cmocka.h has no extern "C" of its own */
extern "C" {
#include <cmocka.h>
}

#include "testutil.h"
#include "prof.h"

/* a lambda's PROF_FUNC name, as each compiler spells its scope */
#ifdef __clang__
#define LAMBDA "(anonymous class)::operator()"
#else
#define LAMBDA "<lambda()>"
#endif

static int line_int, line_double, line_lambda_a, line_lambda_b;
static volatile double sink;

static void build(int x)
{
	PROF_FUNC(); line_int = __LINE__;
	sink += x;
}

static void build(double x)
{
	PROF_FUNC(); line_double = __LINE__;
	sink += x;
}

static void alone(void)
{
	PROF_USDT(overload_alone);
	sink += 1;
}

static std::string report(void)
{
	prof_report_opts o = {};
	prof_snapshot *s = test_snapshot(0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(s);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(prof_report_text(f, s, &o), 0);
	fclose(f);
	prof_snapshot__destroy(s);
	std::string text(buf, len);
	free(buf);
	return text;
}

static void test_overloads(void **state)
{
	auto a = [] { PROF_FUNC(); line_lambda_a = __LINE__; sink += 2; };
	auto b = [] { PROF_FUNC(); line_lambda_b = __LINE__; sink += 3; };
	char want[128];

	(void)state;
	build(1);
	build(2.0);
	a();
	b();
	alone();
	std::string text = report();
	print_message("%s", text.c_str());
	snprintf(want, sizeof(want), "build (test_overload.cc:%d)\n", line_int);
	assert_true(text.find(want) != std::string::npos);
	snprintf(want, sizeof(want), "build (test_overload.cc:%d)\n", line_double);
	assert_true(text.find(want) != std::string::npos);
	snprintf(want, sizeof(want), "test_overloads::" LAMBDA " (test_overload.cc:%d)\n", line_lambda_a);
	assert_true(text.find(want) != std::string::npos);
	snprintf(want, sizeof(want), "test_overloads::" LAMBDA " (test_overload.cc:%d)\n", line_lambda_b);
	assert_true(text.find(want) != std::string::npos);
	assert_true(text.find("overload_alone\n") != std::string::npos);
	assert_true(text.find("overload_alone (") == std::string::npos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overloads),
	};

	setenv("PROF_NO_DAEMON", "1", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
