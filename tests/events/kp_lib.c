// SPDX-License-Identifier: LGPL-2.1-or-later
/* A library kp_prog loads with dlopen(), built without fhook's flags. */
__attribute__((noipa)) long kp_lib_fn(long x)
{
	return 2 * x + 1;
}
