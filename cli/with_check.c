// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `fhook patch --with LIB:SYM`: look at LIB before anything runs.  Calls
 * of the target are sent to SYM, so SYM must be code: a variable there
 * would be executed (a segfault, or worse, whatever its bytes do).  The
 * file is read with libelf only (dlopen would run its constructors); the
 * preload checks again with the loader's own view once it is loaded
 * (lib/livepatch/preload.c).  tests/fuzz/fuzz_with.c feeds this arbitrary
 * bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch_insn.h"
#include "with_check.h"

static const char *type_name(int type)
{
	switch (type) {
	case STT_OBJECT:
		return "a variable (STT_OBJECT)";
	case STT_TLS:
		return "a thread-local variable (STT_TLS)";
	case STT_NOTYPE:
		return "an untyped symbol (STT_NOTYPE)";
	case STT_SECTION:
	case STT_FILE:
		return "no function";
	default:
		return "no function (its symbol type is not STT_FUNC)";
	}
}

/* @name in the dynamic symbol table of @elf: 0 (fine, or not there), or -ENOEXEC. */
static int check_sym(Elf *elf, const char *lib, const char *name, char *why, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t nsec;

	if (elf_getshdrnum(elf, &nsec))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			GElf_Shdr ts;
			const char *nm;
			int type;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!nm || strcmp(nm, name))
				continue;
			type = GELF_ST_TYPE(s.st_info);
			if (type != STT_FUNC && type != STT_GNU_IFUNC) {
				snprintf(why, size, "%s: '%s' is %s, not a function: --with needs "
					 "a function of the target's prototype", lib, name,
					 type_name(type));
				return -ENOEXEC;
			}
			if (s.st_shndx >= SHN_LORESERVE || s.st_shndx >= nsec ||
			    !gelf_getshdr(elf_getscn(elf, s.st_shndx), &ts) ||
			    !(ts.sh_flags & SHF_EXECINSTR)) {
				snprintf(why, size, "%s: '%s' is not in an executable section", lib,
					 name);
				return -ENOEXEC;
			}
			return 0;
		}
	}
	return 0;	/* not exported: dlsym says so, by name */
}

int lp_check_with(const char *lib, const char *name, char *why, size_t size)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd, ret = 0;

	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "%s: %s", lib, strerror(errno));
		return -errno;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    gelf_getclass(elf) != ELFCLASS64 || eh.e_machine != FHOOK_ELF_MACHINE) {
		snprintf(why, size, "%s: not an " FHOOK_ARCH_NAME " ELF shared object", lib);
		ret = -ENOEXEC;
	} else if (eh.e_type != ET_DYN) {
		snprintf(why, size, "%s: not a shared object (ELF type %u): build it with "
			 "-shared -fPIC", lib, (unsigned)eh.e_type);
		ret = -ENOEXEC;
	} else {
		ret = check_sym(elf, lib, name, why, size);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}
