// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for what `fhook patch --with LIB:SYM` reads of the
 * replacement library before anything runs (cli/with_check.c): the ELF
 * header, the section headers, the dynamic symbol table and its strings,
 * of an arbitrary file.  data[0] picks the symbol name looked for.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../cli/with_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "f", "plain", "not_a_function", "per_thread", "" };
	static int fd = -1;
	static char path[64];
	char why[600];

	if (!size)
		return 0;
	if (fd < 0) {
		fd = memfd_create("fuzz-with", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data + 1, size - 1, 0) != (ssize_t)(size - 1))
		return 0;
	lp_check_with(path, names[data[0] % 5], why, sizeof(why));
	return 0;
}
