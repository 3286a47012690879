// SPDX-License-Identifier: MIT
/*
 * cov_exit.c - in a coverage build (make coverage), a test's child that
 * ends by _exit() writes its counts first: gcov writes them at exit(), and
 * the children that run profctl's verbs, fork's paths or a worker as
 * another user end by _exit() (linked with --wrap=_exit, tests/tests.mk).
 * The counts are then zeroed: a vfork() child shares its parent's, which
 * are written once here and go on from zero (gcov adds each write to the
 * file's).
 */
void __gcov_dump(void);
void __gcov_reset(void);
void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	__gcov_dump();
	__gcov_reset();
	__real__exit(status);
}
