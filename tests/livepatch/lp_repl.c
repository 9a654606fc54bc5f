// SPDX-License-Identifier: LGPL-2.1-or-later
/* Replacements for lp_prog's greeting(); they call the original. */
#include <stdio.h>

const char *greeting(void);

const char *greeting_new(void)
{
	static __thread char buf[64];

	snprintf(buf, sizeof(buf), "patched(%s)", greeting());
	return buf;
}

const char *greeting_loud(void)
{
	return "HELLO";
}
