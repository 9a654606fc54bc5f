// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading what fhook needs from an ELF file with libelf: the recorded sites
 * (__patchable_function_entries, __mcount_loc) and the function symbols.
 *
 * Sites are read from the file, not from memory, so that the result does
 * not depend on whether the loader has relocated the object yet.  The file
 * holds link-time addresses; where a linker left the slot zero and put the
 * value in a RELATIVE relocation's addend only, the addend is used.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objects.h"

static int elf_open(const char *path, int *fdp, Elf **elfp)
{
	int fd;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	*fdp = fd;
	*elfp = elf;
	return 0;
}

static void elf_close(int fd, Elf *elf)
{
	elf_end(elf);
	close(fd);
}

/* Addends of RELATIVE relocations that land in [lo, hi): value[(off-lo)/8]. */
static void apply_relative_addends(Elf *elf, unsigned long lo, unsigned long hi,
				   unsigned long *vals)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela r;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			if (GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE)
				continue;
			if (r.r_offset < lo || r.r_offset + 8 > hi || (r.r_offset - lo) % 8)
				continue;
			if (!vals[(r.r_offset - lo) / 8])
				vals[(r.r_offset - lo) / 8] = (unsigned long)r.r_addend;
		}
	}
}

int fhook_elf_read_sites(const char *path, struct fhook_elf_sites *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	Elf *elf;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	ret = elf_open(path, &fd, &elf);
	if (ret)
		return ret;
	ret = -ENOEXEC;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64 || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		goto out;

	while ((scn = elf_nextscn(elf, scn))) {
		unsigned long *vals, *na;
		unsigned char *nm;
		const char *name;
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;
		int mcount;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, "__patchable_function_entries"))
			mcount = 0;
		else if (!strcmp(name, "__mcount_loc"))
			mcount = 1;
		else
			continue;
		if (sh.sh_type != SHT_PROGBITS || sh.sh_size % 8)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || d->d_size != sh.sh_size)
			continue;
		n = sh.sh_size / 8;
		vals = calloc(n ? n : 1, sizeof(*vals));
		if (!vals) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(vals, d->d_buf, n * 8);
		apply_relative_addends(elf, sh.sh_addr, sh.sh_addr + sh.sh_size, vals);

		na = realloc(out->addrs, (out->nr + n + 1) * sizeof(*na));
		nm = realloc(out->from_mcount, out->nr + n + 1);
		if (na)
			out->addrs = na;
		if (nm)
			out->from_mcount = nm;
		if (!na || !nm) {
			free(vals);
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (!vals[i])
				continue;	/* a discarded function */
			out->addrs[out->nr] = vals[i];
			out->from_mcount[out->nr] = mcount;
			out->nr++;
		}
		free(vals);
	}
	ret = 0;
out:
	if (ret) {
		free(out->addrs);
		free(out->from_mcount);
		memset(out, 0, sizeof(*out));
	}
	elf_close(fd, elf);
	return ret;
}

/*
 * Sort symbols by address: an LSD radix sort on as many bytes as the
 * largest address needs.  Start-up reads every symbol of every instrumented
 * object, and a comparison sort through a callback was most of its cost.
 * Stable, so aliases keep their symbol-table order for the dedup below.
 */
static int sort_syms(struct fhook_sym *syms, size_t nr)
{
	struct fhook_sym *tmp, *src = syms, *dst;
	unsigned long max = 0;
	size_t i, count[256];
	int shift;

	for (i = 0; i < nr; i++)
		if (syms[i].addr > max)
			max = syms[i].addr;
	tmp = malloc((nr ? nr : 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (shift = 0; shift < 64 && (max >> shift); shift += 8) {
		size_t pos = 0;

		memset(count, 0, sizeof(count));
		for (i = 0; i < nr; i++)
			count[(src[i].addr >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = pos;
			pos += c;
		}
		for (i = 0; i < nr; i++)
			dst[count[(src[i].addr >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == syms ? tmp : syms;
	}
	if (src != syms)
		memcpy(syms, src, nr * sizeof(*syms));
	free(tmp);
	return 0;
}

static int read_symtab(Elf *elf, Elf_Scn *scn, struct fhook_sym **symsp, size_t *nrp,
		       char **namesp)
{
	struct fhook_sym *syms = NULL;
	size_t i, n, nr = 0, nlen = 0, ncap = 0;
	char *names = NULL;
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -ENOEXEC;
	d = elf_getdata(scn, NULL);
	if (!d)
		return -ENOEXEC;
	n = sh.sh_size / sh.sh_entsize;
	syms = malloc((n ? n : 1) * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name;
		GElf_Sym s;
		size_t len;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		len = strlen(name) + 1;
		if (nlen + len > ncap) {
			size_t cap = ncap ? ncap * 2 : 4096;
			char *nn;

			while (cap < nlen + len)
				cap *= 2;
			nn = realloc(names, cap);
			if (!nn)
				goto nomem;
			names = nn;
			ncap = cap;
		}
		memcpy(names + nlen, name, len);
		syms[nr].addr = s.st_value;
		syms[nr].size = s.st_size > UINT32_MAX ? UINT32_MAX : (unsigned int)s.st_size;
		syms[nr].name = (unsigned int)nlen;
		nlen += len;
		nr++;
	}
	if (sort_syms(syms, nr))
		goto nomem;
	/* drop aliases: one symbol per address, the one with the largest size */
	if (nr) {
		size_t w = 1;

		for (i = 1; i < nr; i++) {
			if (syms[i].addr != syms[w - 1].addr)
				syms[w++] = syms[i];
			else if (syms[i].size > syms[w - 1].size)
				syms[w - 1] = syms[i];
		}
		nr = w;
	}
	*symsp = syms;
	*nrp = nr;
	*namesp = names ? names : strdup("");
	return 0;
nomem:
	free(syms);
	free(names);
	return -ENOMEM;
}

int fhook_elf_read_syms(const char *path, struct fhook_sym **syms, size_t *nr, char **names)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	Elf *elf;
	int fd, ret;

	*syms = NULL;
	*nr = 0;
	*names = NULL;
	ret = elf_open(path, &fd, &elf);
	if (ret)
		return ret;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	ret = 0;
	if (symtab)
		ret = read_symtab(elf, symtab, syms, nr, names);
	if ((!symtab || (!ret && !*nr)) && dynsym) {
		free(*syms);
		free(*names);
		ret = read_symtab(elf, dynsym, syms, nr, names);
	}
	if (!ret && !*names)
		*names = strdup("");
	elf_close(fd, elf);
	return ret;
}
