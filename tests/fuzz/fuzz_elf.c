// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for the ELF readers behind `fhook prepare`, `fhook
 * funcs` and start-up: the site sections and the symbol tables of an
 * arbitrary file.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fhook/internal/elf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct fhook_elf_site_map m;
	struct fhook_elf_sites es;
	struct fhook_sym *syms;
	volatile unsigned long sum = 0;
	unsigned int s;
	char *names;
	size_t nr, i;

	if (fd < 0) {
		fd = memfd_create("fuzz-elf", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (!fhook_elf_read_sites(path, &es)) {
		free(es.addrs);
		free(es.from_mcount);
	}
	/* start-up's reader: every mapped slot must be readable */
	if (!fhook_elf_map_sites(path, 0, &m))
		for (s = 0; s < m.nr; s++)
			for (i = 0; i < m.sec[s].nr; i++)
				sum += m.sec[s].addrs[i];
	fhook_elf_unmap_sites(&m);
	if (!fhook_elf_read_syms(path, 0, &syms, &nr, &names)) {
		free(syms);
		free(names);
	}
	return 0;
}
