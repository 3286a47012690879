// SPDX-License-Identifier: MIT
/*
 * profctl.c - the profctl command: list, report, reset, top, status, zones.
 * Everything is in profctl_cli.c and the verbs' files (libprofctl.a) so the
 * tests can run the same code.
 */
#include "profctl.h"

int main(int argc, char **argv)
{
	return profctl_main(argc, argv);
}
