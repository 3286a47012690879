// SPDX-License-Identifier: MIT
/*
 * agent.c - the profd client.  Placeholder until the daemon lands: without
 * profd every thread keeps the constant kernel word.
 */
#include "runtime.h"

void prof_agent__start(void)
{
}

void prof_agent__kick(void)
{
}

void prof_agent__atfork_child(void)
{
}
