// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading what fhook needs from an ELF file: the recorded sites
 * (__patchable_function_entries, __mcount_loc) and the function symbols.
 *
 * A small reader of our own rather than libelf: every traced process loads
 * libfhook, and libelf (with libz) costs it two more libraries to map and
 * relocate before main().  Only 64-bit little-endian files are read (the
 * architecture fhook patches); every offset and size taken from the file is
 * checked against the file's size before it is used.
 *
 * Sites are read from the file, not from memory, so that the result does
 * not depend on whether the loader has relocated the object yet.  The file
 * holds link-time addresses; where a linker left the slot zero and put the
 * value in a RELATIVE relocation's addend only, the addend is used.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fhook/internal/elf.h>

#include "arch_insn.h"
#include "util/sort.h"
#include "util/startup.h"

/* Section headers beyond this are not believed (a corrupt e_shnum). */
#define MAX_SECTIONS	(1u << 20)

/* An opened file (struct fhook_elf_file to the callers): its headers, read once. */
#define elf_file fhook_elf_file

struct elf_file {
	int fd;
	unsigned long size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	unsigned int nr_sh;
	char *shstr;
	unsigned long shstr_size;
	char *tail;		/* holds sh, and shstr if shstr_in_tail (read_tail()) */
	bool shstr_in_tail;
};

static bool __fhook_startup in_file(const struct elf_file *f, unsigned long off, unsigned long len)
{
	return off <= f->size && len <= f->size - off;
}

static int __fhook_startup read_at(const struct elf_file *f, void *buf, unsigned long len,
				   unsigned long off)
{
	unsigned long done = 0;

	if (!in_file(f, off, len))
		return -ENOEXEC;
	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOEXEC;
		done += (unsigned long)n;
	}
	return 0;
}

/* A copy of section @s's bytes (NUL-terminated for string tables). */
static void *__fhook_startup read_section(const struct elf_file *f, const Elf64_Shdr *s)
{
	char *buf;

	if (s->sh_type == SHT_NOBITS || !in_file(f, s->sh_offset, s->sh_size))
		return NULL;
	buf = malloc(s->sh_size + 1);
	if (!buf)
		return NULL;
	if (read_at(f, buf, s->sh_size, s->sh_offset)) {
		free(buf);
		return NULL;
	}
	buf[s->sh_size] = 0;
	return buf;
}

static void __fhook_startup elf_close(struct elf_file *f)
{
	if (!f->tail)
		free(f->sh);
	if (!f->shstr_in_tail)
		free(f->shstr);
	free(f->tail);
	close(f->fd);
}

/*
 * The section headers and, when it lies just before them (where linkers
 * put it), the section-name table, with one read: every process reads the
 * executable's and libc's at start-up, a system call each less.  False
 * when they could not be read so: then one by one, as before.
 */
static bool __fhook_startup read_tail(struct elf_file *f, unsigned long nr)
{
	unsigned long bytes = nr * sizeof(Elf64_Shdr), shoff = f->eh.e_shoff, lead, start;
	const Elf64_Shdr *ss;
	unsigned int si;
	char *buf;

	if (shoff % 8)
		return false;
	/* the names of a few dozen sections; a longer table is read by itself */
	lead = shoff < 2048 ? shoff & ~7UL : 2048;
	start = shoff - lead;
	buf = malloc(lead + bytes);
	if (!buf)
		return false;
	if (read_at(f, buf, lead + bytes, start)) {
		free(buf);
		return false;
	}
	f->tail = buf;
	f->sh = (Elf64_Shdr *)(buf + lead);
	f->nr_sh = (unsigned int)nr;
	si = f->eh.e_shstrndx == SHN_XINDEX ? f->sh[0].sh_link : f->eh.e_shstrndx;
	if (!si || si >= nr)
		return true;
	ss = &f->sh[si];
	/* in the bytes read, and ending in a NUL: every name in it ends there */
	if (ss->sh_type != SHT_NOBITS && ss->sh_size && ss->sh_offset >= start &&
	    ss->sh_offset <= shoff && ss->sh_size <= shoff - ss->sh_offset &&
	    !buf[ss->sh_offset - start + ss->sh_size - 1]) {
		f->shstr = buf + (ss->sh_offset - start);
		f->shstr_size = ss->sh_size - 1;
		f->shstr_in_tail = true;
	}
	return true;
}

/* Open @path and read its header, section headers and section names. */
static int __fhook_startup elf_open(const char *path, struct elf_file *f)
{
	static const unsigned char ident[] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3,
					       ELFCLASS64, ELFDATA2LSB };
	struct stat st;
	unsigned long n;
	int ret;

	memset(f, 0, sizeof(*f));
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	ret = -ENOEXEC;
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	f->size = (unsigned long)st.st_size;
	if (read_at(f, &f->eh, sizeof(f->eh), 0) || memcmp(f->eh.e_ident, ident, sizeof(ident)))
		goto fail;
	if (!f->eh.e_shoff || f->eh.e_shentsize != sizeof(Elf64_Shdr))
		goto fail;
	n = f->eh.e_shnum;
	if (!n) {
		/* more than SHN_LORESERVE sections: the count is in section 0 */
		Elf64_Shdr s0;

		if (read_at(f, &s0, sizeof(s0), f->eh.e_shoff))
			goto fail;
		n = s0.sh_size;
	}
	if (!n || n > MAX_SECTIONS || !in_file(f, f->eh.e_shoff, n * sizeof(Elf64_Shdr)))
		goto fail;
	if (read_tail(f, n)) {
		if (f->shstr)
			return 0;
		goto names;
	}
	f->nr_sh = (unsigned int)n;
	f->sh = malloc(n * sizeof(Elf64_Shdr));
	if (!f->sh) {
		ret = -ENOMEM;
		goto fail;
	}
	if (read_at(f, f->sh, n * sizeof(Elf64_Shdr), f->eh.e_shoff))
		goto fail;
names:
	n = f->eh.e_shstrndx == SHN_XINDEX ? f->sh[0].sh_link : f->eh.e_shstrndx;
	if (n && n < f->nr_sh) {
		f->shstr = read_section(f, &f->sh[n]);
		if (f->shstr)
			f->shstr_size = f->sh[n].sh_size;
	}
	return 0;
fail:
	elf_close(f);
	return ret;
}

int fhook_elf_check(const char *path)
{
	struct elf_file f;
	int ret = elf_open(path, &f);

	if (!ret)
		elf_close(&f);
	return ret;
}

int fhook_elf_file_open(const char *path, struct fhook_elf_file **out)
{
	struct elf_file *f = malloc(sizeof(*f));
	int ret;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	ret = elf_open(path, f);
	if (ret) {
		free(f);
		return ret;
	}
	*out = f;
	return 0;
}

void fhook_elf_file_close(struct fhook_elf_file *f)
{
	if (!f)
		return;
	elf_close(f);
	free(f);
}

int fhook_elf_file_fd(const struct fhook_elf_file *f)
{
	return f->fd;
}

static const char *__fhook_startup sec_name(const struct elf_file *f, const Elf64_Shdr *s)
{
	if (!f->shstr || s->sh_name >= f->shstr_size)
		return "";
	return f->shstr + s->sh_name;	/* read_section put a NUL at the end */
}

/* 1 for __mcount_loc, 0 for __patchable_function_entries, -1 for neither. */
static int __fhook_startup site_section(const struct elf_file *f, const Elf64_Shdr *s)
{
	const char *name = sec_name(f, s);

	if (s->sh_type != SHT_PROGBITS || s->sh_size % 8)
		return -1;
	if (!strcmp(name, "__patchable_function_entries"))
		return 0;
	if (!strcmp(name, "__mcount_loc"))
		return 1;
	return -1;
}

static bool __fhook_startup sites_elf_type(const struct elf_file *f)
{
	return f->eh.e_machine == FHOOK_ELF_MACHINE &&
	       (f->eh.e_type == ET_EXEC || f->eh.e_type == ET_DYN);
}

/* How many non-empty site sections @f has, and are they all marked prepared? */
static void __fhook_startup scan_sections(const struct elf_file *f, struct fhook_elf_scan *out)
{
	unsigned int i;

	out->prepared = true;
	for (i = 0; i < f->nr_sh; i++) {
		if (site_section(f, &f->sh[i]) < 0 || !f->sh[i].sh_size)
			continue;
		out->nr_sections++;
		if (!(f->sh[i].sh_flags & FHOOK_SHF_PREPARED))
			out->prepared = false;
	}
	if (!out->nr_sections)
		out->prepared = false;
}

int fhook_elf_scan(const char *path, struct fhook_elf_scan *out)
{
	struct elf_file f;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = elf_open(path, &f);
	if (ret)
		return ret;
	if (!sites_elf_type(&f)) {
		ret = -ENOEXEC;
		goto out;
	}
	scan_sections(&f, out);
out:
	elf_close(&f);
	return ret;
}

/*
 * Is a slot of a site list zero?  A discarded function's slot is,
 * and so is one whose value a linker left in a relocation's addend: only
 * the copying reader tells them apart.
 */
static bool __fhook_startup sites_have_zero(const unsigned long *addrs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!addrs[i])
			return true;
	return false;
}

/* The file's bytes at link-time address @addr, from the loadable segment holding it. */
static int __fhook_startup read_vaddr(const struct elf_file *f, unsigned long addr, void *buf,
				      size_t len)
{
	Elf64_Phdr ph[32];
	unsigned int i, n = f->eh.e_phnum;

	if (f->eh.e_phentsize != sizeof(Elf64_Phdr) || !n || n > 32 ||
	    read_at(f, ph, n * sizeof(*ph), f->eh.e_phoff))
		return -ENOEXEC;
	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr &&
		    addr - ph[i].p_vaddr < ph[i].p_filesz &&
		    len <= ph[i].p_filesz - (addr - ph[i].p_vaddr))
			return read_at(f, buf, len, ph[i].p_offset + (addr - ph[i].p_vaddr));
	return -ENOEXEC;
}

/*
 * A range of the file, read-only: a small one copied to the heap, a larger
 * one mapped from the page cache.  On this kind of virtual machine an
 * munmap() of pages that were mapped costs 50-80 us (the page-table
 * teardown and the TLB flush), a pread() of a few KiB 1-2 us: a traced
 * process read its site lists and symbol tables this way several times
 * before main().  A copy costs its heap pages instead (a fault each the
 * first time), which beyond a few pages outweighs the teardown.  map_len
 * 0: map is a heap copy.
 */
#define ELF_COPY_MAX	(16 * 1024)

struct sec_map {
	void *map;
	size_t len;
	const char *p;
};

static int __fhook_startup map_range(const struct elf_file *f, unsigned long off,
				     unsigned long size, int mflags, struct sec_map *m)
{
	unsigned long start = off & ~4095UL;

	m->map = NULL;
	m->len = 0;
	if (!size || !in_file(f, off, size))
		return -ENOEXEC;
	if (size <= ELF_COPY_MAX) {
		m->map = malloc(size);
		if (!m->map)
			return -ENOMEM;
		if (read_at(f, m->map, size, off)) {
			free(m->map);
			m->map = NULL;
			return -EIO;
		}
		m->p = m->map;
		return 0;
	}
	m->map = mmap(NULL, off - start + size, PROT_READ, MAP_PRIVATE | mflags, f->fd,
		      (off_t)start);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		return -errno;
	}
	m->len = off - start + size;
	m->p = (const char *)m->map + (off - start);
	return 0;
}

static void __fhook_startup unmap_range(void *map, size_t len)
{
	if (len)
		munmap(map, len);
	else
		free(map);
}

static int map_section(const struct elf_file *f, const Elf64_Shdr *s, struct sec_map *m)
{
	if (s->sh_type == SHT_NOBITS) {
		m->map = NULL;
		return -ENOEXEC;
	}
	return map_range(f, s->sh_offset, s->sh_size, MAP_POPULATE, m);
}

static void unmap_section(struct sec_map *m)
{
	if (m->map)
		unmap_range(m->map, m->len);
	m->map = NULL;
}

static int __fhook_startup map_sites(const struct elf_file *f, unsigned int flags,
				     struct fhook_elf_site_map *m)
{
	unsigned int i;
	int ret = 0;

	memset(m, 0, sizeof(*m));
	if (!sites_elf_type(f)) {
		ret = -ENOEXEC;
		goto out;
	}
	scan_sections(f, &m->scan);
	if (!m->scan.nr_sections || (m->scan.prepared && (flags & FHOOK_ELF_MAP_UNPREPARED)))
		goto out;
	for (i = 0; i < f->nr_sh; i++) {
		const Elf64_Shdr *sh = &f->sh[i];
		int mcount = site_section(f, sh);
		struct sec_map sm;

		if (mcount < 0 || !sh->sh_size)
			continue;
		if (!in_file(f, sh->sh_offset, sh->sh_size)) {
			ret = -ENOEXEC;
			goto out;
		}
		if (m->nr == FHOOK_ELF_MAP_SECTIONS || sh->sh_offset % 8) {
			m->copy_needed = true;
			break;
		}
		if (map_range(f, sh->sh_offset, sh->sh_size, 0, &sm)) {
			m->copy_needed = true;
			break;
		}
		m->sec[m->nr].map = sm.map;
		m->sec[m->nr].map_len = sm.len;
		m->sec[m->nr].addrs = (const unsigned long *)sm.p;
		m->sec[m->nr].nr = sh->sh_size / 8;
		m->sec[m->nr].mcount = mcount;
		if (sites_have_zero(m->sec[m->nr].addrs, m->sec[m->nr].nr))
			m->copy_needed = true;
		m->nr++;
	}
	for (i = 0; m->nr && !m->have_first && i < m->sec[0].nr; i++)
		if (m->sec[0].addrs[i])
			m->have_first = !read_vaddr(f, m->sec[0].addrs[i], m->first,
						    sizeof(m->first));
out:
	return ret;
}

int __fhook_startup fhook_elf_map_sites(const char *path, unsigned int flags,
					struct fhook_elf_site_map *m)
{
	struct elf_file f;
	int ret = elf_open(path, &f);

	if (ret) {
		memset(m, 0, sizeof(*m));
		return ret;
	}
	ret = map_sites(&f, flags, m);
	elf_close(&f);
	return ret;
}

int fhook_elf_file_map_sites(struct fhook_elf_file *f, unsigned int flags,
			     struct fhook_elf_site_map *m)
{
	return map_sites(f, flags, m);
}

void __fhook_startup fhook_elf_unmap_sites(struct fhook_elf_site_map *m)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		unmap_range(m->sec[i].map, m->sec[i].map_len);
	m->nr = 0;
}

/* Addends of RELATIVE relocations that land in [lo, hi): value[(off-lo)/8]. */
static void apply_relative_addends(const struct elf_file *f, unsigned long lo, unsigned long hi,
				   unsigned long *vals)
{
	unsigned int s;

	for (s = 0; s < f->nr_sh; s++) {
		const Elf64_Shdr *sh = &f->sh[s];
		Elf64_Rela *r;
		size_t i, n;

		if (sh->sh_type != SHT_RELA || sh->sh_entsize != sizeof(Elf64_Rela))
			continue;
		r = read_section(f, sh);
		if (!r)
			continue;
		n = sh->sh_size / sizeof(*r);
		for (i = 0; i < n; i++) {
			if (ELF64_R_TYPE(r[i].r_info) != FHOOK_ELF_R_RELATIVE)
				continue;
			if (r[i].r_offset < lo || r[i].r_offset >= hi || r[i].r_offset + 8 > hi ||
			    (r[i].r_offset - lo) % 8)
				continue;
			if (!vals[(r[i].r_offset - lo) / 8])
				vals[(r[i].r_offset - lo) / 8] = (unsigned long)r[i].r_addend;
		}
		free(r);
	}
}

static int read_sites(const struct elf_file *f, struct fhook_elf_sites *out)
{
	unsigned int s;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = -ENOEXEC;
	if (!sites_elf_type(f))
		goto out;

	for (s = 0; s < f->nr_sh; s++) {
		const Elf64_Shdr *sh = &f->sh[s];
		unsigned long *vals, *na;
		unsigned char *nm;
		size_t i, n, w;
		bool zero = false;
		int mcount = site_section(f, sh);

		if (mcount < 0 || !sh->sh_size || !in_file(f, sh->sh_offset, sh->sh_size))
			continue;
		n = sh->sh_size / 8;
		/* straight into the result: no copy of a list that may be long */
		na = realloc(out->addrs, (out->nr + n + 1) * sizeof(*na));
		if (na)
			out->addrs = na;
		nm = na ? realloc(out->from_mcount, out->nr + n + 1) : NULL;
		if (nm)
			out->from_mcount = nm;
		if (!na || !nm) {
			ret = -ENOMEM;
			goto out;
		}
		vals = out->addrs + out->nr;
		if (read_at(f, vals, sh->sh_size, sh->sh_offset))
			continue;
		for (i = 0; i < n && !zero; i++)
			zero = !vals[i];
		/* relocations are only read when some slot needs them */
		if (zero)
			apply_relative_addends(f, sh->sh_addr, sh->sh_addr + sh->sh_size, vals);
		for (i = 0, w = 0; i < n; i++)
			if (vals[i])	/* zero: a discarded function */
				vals[w++] = vals[i];
		memset(out->from_mcount + out->nr, mcount, w);
		out->nr += w;
	}
	ret = 0;
out:
	if (ret) {
		free(out->addrs);
		free(out->from_mcount);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

int fhook_elf_read_sites(const char *path, struct fhook_elf_sites *out)
{
	struct elf_file f;
	int ret = elf_open(path, &f);

	if (ret) {
		memset(out, 0, sizeof(*out));
		return ret;
	}
	ret = read_sites(&f, out);
	elf_close(&f);
	return ret;
}

int fhook_elf_file_read_sites(struct fhook_elf_file *f, struct fhook_elf_sites *out)
{
	return read_sites(f, out);
}

/*
 * Sort symbols by address: an LSD radix sort on as many bytes as the
 * largest address needs.  A comparison sort through a callback was most of
 * the cost of reading a large symbol table.  Stable, so aliases keep their
 * symbol-table order for the dedup below.
 */
_Static_assert(sizeof(struct fhook_sym) == sizeof(struct fhook_addr_rec) &&
	       offsetof(struct fhook_sym, addr) == 0, "symbols sort as address records");

static int sort_syms(struct fhook_sym *syms, size_t nr)
{
	return fhook_sort_addr_recs((struct fhook_addr_rec *)syms, nr);
}

/* Does read_symtab() take @s (with @flags)?  @str holds @str_size bytes, the last a NUL. */
static bool sym_taken(const Elf64_Sym *s, unsigned int flags, const char *str,
		      unsigned long str_size)
{
	int type = ELF64_ST_TYPE(s->st_info);

	if (type != STT_FUNC && type != STT_GNU_IFUNC &&
	    !(type == STT_OBJECT && (flags & FHOOK_ELF_SYMS_DATA)))
		return false;
	return s->st_shndx != SHN_UNDEF && s->st_value && s->st_name < str_size &&
	       str[s->st_name];
}

static unsigned int sym_size(const Elf64_Sym *s)
{
	return s->st_size > UINT32_MAX ? UINT32_MAX : (unsigned int)s->st_size;
}

static int read_symtab(const struct elf_file *f, const Elf64_Shdr *sh, unsigned int flags,
		       struct fhook_sym **symsp, size_t *nrp, char **namesp)
{
	struct fhook_sym *syms = NULL;
	size_t i, n, nr = 0, nlen = 0, ncap = 0;
	char *names = NULL, *str = NULL;
	unsigned long str_size;
	Elf64_Sym *tab;
	int ret = -ENOMEM;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= f->nr_sh)
		return -ENOEXEC;
	tab = read_section(f, sh);
	str = read_section(f, &f->sh[sh->sh_link]);
	if (!tab || !str) {
		ret = -ENOEXEC;
		goto out;
	}
	str_size = f->sh[sh->sh_link].sh_size;
	n = sh->sh_size / sizeof(Elf64_Sym);
	syms = malloc((n ? n : 1) * sizeof(*syms));
	if (!syms)
		goto out;
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = &tab[i];
		const char *name;
		size_t len;

		/* the copy ends with a NUL */
		if (!sym_taken(s, flags, str, str_size + 1))
			continue;
		name = str + s->st_name;
		len = strlen(name) + 1;
		if (nlen + len > ncap) {
			size_t cap = ncap ? ncap * 2 : 4096;
			char *nn;

			while (cap < nlen + len)
				cap *= 2;
			nn = realloc(names, cap);
			if (!nn)
				goto out;
			names = nn;
			ncap = cap;
		}
		memcpy(names + nlen, name, len);
		syms[nr].addr = s->st_value;
		syms[nr].size = sym_size(s);
		syms[nr].name = (unsigned int)nlen;
		syms[nr].data = ELF64_ST_TYPE(s->st_info) == STT_OBJECT;
		nlen += len;
		if (nlen >= 1UL << 31) {
			ret = -EFBIG;
			goto out;
		}
		nr++;
	}
	if (sort_syms(syms, nr))
		goto out;
	/* drop aliases: one symbol per address, the one with the largest size */
	if (nr && !(flags & FHOOK_ELF_SYMS_ALIASES)) {
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
	syms = NULL;
	names = NULL;
	ret = *namesp ? 0 : -ENOMEM;
out:
	free(syms);
	free(names);
	free(tab);
	free(str);
	return ret;
}

/*
 * @f's symbol tables: .symtab is read, and .dynsym where .symtab takes
 * nothing (or is not there).
 */
static void sym_tables(const struct elf_file *f, const Elf64_Shdr **symtab,
		       const Elf64_Shdr **dynsym)
{
	unsigned int i;

	*symtab = *dynsym = NULL;
	for (i = 0; i < f->nr_sh; i++) {
		if (f->sh[i].sh_type == SHT_SYMTAB)
			*symtab = &f->sh[i];
		else if (f->sh[i].sh_type == SHT_DYNSYM)
			*dynsym = &f->sh[i];
	}
}

static int read_syms(const struct elf_file *f, unsigned int flags, struct fhook_sym **syms,
		     size_t *nr, char **names)
{
	const Elf64_Shdr *symtab, *dynsym;
	int ret = 0;

	sym_tables(f, &symtab, &dynsym);
	if (symtab)
		ret = read_symtab(f, symtab, flags, syms, nr, names);
	if ((!symtab || (!ret && !*nr)) && dynsym) {
		free(*syms);
		free(*names);
		*syms = NULL;
		*names = NULL;
		*nr = 0;
		ret = read_symtab(f, dynsym, flags, syms, nr, names);
	}
	if (!ret && !*names) {
		*names = strdup("");
		if (!*names)
			ret = -ENOMEM;
	}
	return ret;
}

int fhook_elf_read_syms(const char *path, unsigned int flags, struct fhook_sym **syms,
			size_t *nr, char **names)
{
	struct elf_file f;
	int ret;

	*syms = NULL;
	*nr = 0;
	*names = NULL;
	if ((ret = elf_open(path, &f)))
		return ret;
	ret = read_syms(&f, flags, syms, nr, names);
	elf_close(&f);
	return ret;
}

int fhook_elf_file_read_syms(struct fhook_elf_file *f, unsigned int flags,
			     struct fhook_sym **syms, size_t *nr, char **names)
{
	*syms = NULL;
	*nr = 0;
	*names = NULL;
	return read_syms(f, flags, syms, nr, names);
}

/*
 * One pass over the mapped table @sh for fhook_elf_find_syms(): the
 * symbols named @name into *@out (*@nr of them), how many symbols the
 * table has that read_symtab() would take into *@taken; then, without
 * FHOOK_ELF_SYMS_ALIASES, a second pass for which of them read_symtab()
 * keeps at its address (the first in table order with the largest size,
 * as the stable sort and the alias drop leave it) and where the next
 * symbol starts.
 */
static int find_in_table(const struct elf_file *f, const Elf64_Shdr *sh, const char *name,
			 unsigned int flags, struct fhook_elf_named **out, size_t *nr,
			 size_t *taken)
{
	struct sec_map tab = { 0 }, str = { 0 };
	size_t i, k, n, len = strlen(name), cap = 0;
	unsigned long str_size;
	unsigned int *best_idx = NULL;
	long *best;
	int ret;

	*taken = 0;
	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= f->nr_sh)
		return -ENOEXEC;
	ret = map_section(f, sh, &tab);
	if (!ret)
		ret = map_section(f, &f->sh[sh->sh_link], &str);
	if (ret)
		goto out;
	str_size = f->sh[sh->sh_link].sh_size;
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = (const Elf64_Sym *)tab.p + i;
		struct fhook_elf_named *e;

		/* a name must end inside the table, and the table need not end with a NUL */
		if (!sym_taken(s, flags, str.p, str_size))
			continue;
		(*taken)++;
		if (s->st_name + len >= str_size || str.p[s->st_name + len] ||
		    memcmp(str.p + s->st_name, name, len))
			continue;
		if (*nr == cap) {
			cap = cap ? cap * 2 : 4;
			e = realloc(*out, cap * sizeof(*e));
			if (!e) {
				ret = -ENOMEM;
				goto out;
			}
			*out = e;
		}
		e = &(*out)[(*nr)++];
		e->addr = s->st_value;
		e->size = sym_size(s);
		e->data = ELF64_ST_TYPE(s->st_info) == STT_OBJECT;
		e->kept = true;
		e->next = 0;
		e->index = (unsigned int)i;
	}
	if (!*nr || (flags & FHOOK_ELF_SYMS_ALIASES))
		goto out;
	best = calloc(*nr, sizeof(*best) + sizeof(*best_idx));
	if (!best) {
		ret = -ENOMEM;
		goto out;
	}
	best_idx = (unsigned int *)(best + *nr);
	for (k = 0; k < *nr; k++)
		best[k] = -1;
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = (const Elf64_Sym *)tab.p + i;

		if (!sym_taken(s, flags, str.p, str_size))
			continue;
		for (k = 0; k < *nr; k++) {
			struct fhook_elf_named *e = &(*out)[k];

			if (s->st_value == e->addr && (long)sym_size(s) > best[k]) {
				best[k] = sym_size(s);
				best_idx[k] = (unsigned int)i;
			} else if (s->st_value > e->addr && (!e->next || s->st_value < e->next)) {
				e->next = s->st_value;
			}
		}
	}
	for (k = 0; k < *nr; k++)
		(*out)[k].kept = best_idx[k] == (*out)[k].index;
	free(best);
out:
	unmap_section(&tab);
	unmap_section(&str);
	return ret;
}

static int find_syms(const struct elf_file *f, const char *name, unsigned int flags,
		     struct fhook_elf_named **out)
{
	const Elf64_Shdr *symtab, *dynsym;
	size_t nr = 0, taken = 0;
	int ret = 0;

	*out = NULL;
	sym_tables(f, &symtab, &dynsym);
	if (symtab)
		ret = find_in_table(f, symtab, name, flags, out, &nr, &taken);
	/* the table fhook_elf_read_syms() reads */
	if ((!symtab || (!ret && !taken)) && dynsym) {
		free(*out);
		*out = NULL;
		nr = 0;
		ret = find_in_table(f, dynsym, name, flags, out, &nr, &taken);
	}
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	return (int)nr;
}

int fhook_elf_find_syms(const char *path, const char *name, unsigned int flags,
			struct fhook_elf_named **out)
{
	struct elf_file f;
	int ret;

	*out = NULL;
	if ((ret = elf_open(path, &f)))
		return ret;
	ret = find_syms(&f, name, flags, out);
	elf_close(&f);
	return ret;
}

int fhook_elf_file_find_syms(struct fhook_elf_file *f, const char *name, unsigned int flags,
			     struct fhook_elf_named **out)
{
	return find_syms(f, name, flags, out);
}

int fhook_elf_mark_prepared(void *image, size_t size)
{
	Elf64_Ehdr *eh = image;
	Elf64_Shdr *sh;
	struct elf_file f = { .size = size };
	unsigned long n, i;
	int marked = 0;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	n = eh->e_shnum;
	if (!n || n > MAX_SECTIONS || !in_file(&f, eh->e_shoff, n * sizeof(Elf64_Shdr)) ||
	    eh->e_shoff % 8)
		return -ENOEXEC;
	sh = (Elf64_Shdr *)((char *)image + eh->e_shoff);
	if (eh->e_shstrndx >= n || !in_file(&f, sh[eh->e_shstrndx].sh_offset,
					    sh[eh->e_shstrndx].sh_size))
		return -ENOEXEC;
	f.shstr = (char *)image + sh[eh->e_shstrndx].sh_offset;
	f.shstr_size = sh[eh->e_shstrndx].sh_size;
	for (i = 0; i < n; i++) {
		/* the names must end inside the table */
		if (sh[i].sh_name >= f.shstr_size ||
		    !memchr(f.shstr + sh[i].sh_name, 0, f.shstr_size - sh[i].sh_name))
			continue;
		if (site_section(&f, &sh[i]) < 0)
			continue;
		sh[i].sh_flags |= FHOOK_SHF_PREPARED;
		marked++;
	}
	f.shstr = NULL;
	return marked;
}
