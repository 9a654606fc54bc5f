// SPDX-License-Identifier: LGPL-2.1-or-later
/* kpglob_prog's library, built without fhook's flags: "p kpglob_lib.so:kpg_*" */
static volatile long lib_sink;

__attribute__((noinline)) long kpg_lib_add(long a, long b)
{
	lib_sink += a;
	return a + b;
}

__attribute__((noinline)) long kpg_lib_twice(long a)
{
	lib_sink += a;
	return kpg_lib_add(a, a);
}

__attribute__((noinline)) long other_lib_fn(long a)
{
	lib_sink += a;
	return a - 1;
}
