// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Another tool, as fhook meets it: loaded with dlopen() by kp_prog (as its
 * LIB), it writes into kpg_victim.so from its constructor, before fhook
 * places the probes of "p kpg_victim.so:*" (after dlopen() returns): an
 * int3 on victim_int3's first byte, as a uprobe or a debugger leaves it,
 * and a jump to victim_ok over victim_jmp's first five bytes, as a
 * patching tool does.  Neither is called afterwards.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

long victim_int3(long a);
long victim_jmp(long a);
long victim_ok(long a);

static void poke(void *at, const void *bytes, size_t len)
{
	uintptr_t page = (uintptr_t)at & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);

	mprotect((void *)page, 2 * sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE | PROT_EXEC);
	memcpy(at, bytes, len);
	mprotect((void *)page, 2 * sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC);
}

__attribute__((constructor)) static void patch(void)
{
	unsigned char int3 = 0xcc, jmp[5] = { 0xe9 };
	int32_t rel = (int32_t)((intptr_t)victim_ok - ((intptr_t)victim_jmp + 5));

	memcpy(jmp + 1, &rel, 4);
	poke((void *)victim_int3, &int3, 1);
	poke((void *)victim_jmp, jmp, 5);
}

long kp_lib_fn(long a)
{
	return victim_ok(a);
}
