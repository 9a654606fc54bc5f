// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Functions another tool has written into before fhook probes them
 * (kpg_patcher.c): a kprobe glob must refuse victim_int3 and victim_jmp,
 * naming what it found, and probe victim_ok.
 */
static volatile long victim_sink;

__attribute__((noinline)) long victim_int3(long a)
{
	victim_sink += a;
	return a * 5 + 2;
}

__attribute__((noinline)) long victim_jmp(long a)
{
	victim_sink += a;
	return a * 7 + 3;
}

__attribute__((noinline)) long victim_ok(long a)
{
	victim_sink += a;
	return a * 11 + 4;
}
