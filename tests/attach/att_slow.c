// SPDX-License-Identifier: LGPL-2.1-or-later
/* A library whose constructor takes a second: dlopen holds the loader's lock meanwhile. */
#include <unistd.h>

__attribute__((constructor)) static void slow_init(void)
{
	usleep(1000000);
}

int att_slow_answer(void)
{
	return 42;
}
