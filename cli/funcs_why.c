// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook funcs --why PROG [GLOB]: how a kprobe on the entry of each
 * function of PROG (whose name matches GLOB) would be placed
 * (<fhook/kprobes.h>) by a kprobe glob ("p PROG:GLOB"), and why not with
 * a jump, read from the file with the library's own relocation engine.  A
 * process may still get a trap where this says jump: when a thread keeps
 * being inside the bytes a jump would cover as it is placed.
 *
 *   NAME site                 an fhook site at its entry
 *   NAME jump                 its first instructions are relocated
 *   NAME trap: REASON         a breakpoint; REASON says what refused a jump
 *   NAME none: REASON         not even one instruction can be moved
 *   NAME skipped: REASON      fhook runs it itself: a glob leaves it out
 *                             (lib/kprobes/nokprobe.c)
 *
 * (NAME: a C++ function's short name, as fhook funcs prints it, or as
 * --demangle says)
 * and a last line "# N functions: J jump (P%), T trap, S site, X none, K skipped".
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include <fhook/internal/elf.h>
#include "arch/arch.h"
#include "kprobes/nokprobe.h"

/* The file, whole, and its loadable segments (link-time addresses). */
struct image {
	unsigned char *data;
	size_t size;
	const Elf64_Phdr *ph;
	unsigned int nr_ph;
};

/* @len bytes at link-time address @addr, from the file; NULL if not there */
static const unsigned char *image_at(const struct image *im, unsigned long addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < im->nr_ph; i++) {
		const Elf64_Phdr *p = &im->ph[i];

		if (p->p_type != PT_LOAD || addr < p->p_vaddr ||
		    addr + len > p->p_vaddr + p->p_filesz)
			continue;
		if (p->p_offset + (addr - p->p_vaddr) + len > im->size)
			return NULL;
		return im->data + p->p_offset + (addr - p->p_vaddr);
	}
	return NULL;
}

static bool image_read(void *ctx, unsigned long addr, void *buf, size_t len)
{
	const unsigned char *b = image_at(ctx, addr, len);

	if (b)
		memcpy(buf, b, len);
	return b != NULL;
}

static int image_load(const char *path, struct image *im)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	im->size = (size_t)st.st_size;
	im->data = malloc(im->size ? im->size : 1);
	n = im->data ? pread(fd, im->data, im->size, 0) : -1;
	close(fd);
	if (n != (ssize_t)im->size || im->size < sizeof(*eh))
		return -ENOEXEC;
	eh = (const Elf64_Ehdr *)im->data;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != FHOOK_ELF_MACHINE || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > im->size)
		return -ENOEXEC;
	im->ph = (const Elf64_Phdr *)(im->data + eh->e_phoff);
	im->nr_ph = eh->e_phnum;
	return 0;
}

static bool site_in(const struct fhook_elf_sites *es, unsigned long addr)
{
	size_t lo = 0, hi = es->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (es->addrs[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < es->nr && es->addrs[lo] == addr;
}

/* Does a site of @es (sorted) lie at @addr, or after the arch's entry instructions there? */
static bool has_site(const struct fhook_elf_sites *es, const struct image *im, unsigned long addr)
{
	const unsigned char *b = image_at(im, addr, FHOOK_SITE_ENTRY_MAX);

	return site_in(es, addr) || (b && site_in(es, addr + fhook_site_entry_off(b)));
}

static int addr_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

enum { M_SITE, M_JUMP, M_TRAP, M_NONE, M_SKIPPED };

/* The method of the function [@addr, +@size) followed by @pad free bytes. */
static int method_of(const struct image *im, unsigned long addr, unsigned long size,
		     unsigned int pad, char *why, size_t why_size)
{
	struct fhook_kprobe_file_req req = {
		.addr = addr, .start = addr, .size = size, .size_known = size != 0, .pad = pad,
		.read = image_read, .ctx = (void *)im,
	};
	int ret;

	why[0] = 0;
	if (!size) {
		snprintf(why, why_size, "the function's size is unknown");
		req.size = 16;
	}
	req.code = image_at(im, addr, req.size + pad);
	if (!req.code)
		req.pad = 0;
	/* an unknown size: what the file holds, up to 16 bytes */
	while (!req.code && req.size && (size || req.size > 1))
		req.code = image_at(im, addr, size ? req.size : --req.size);
	if (!req.code) {
		snprintf(why, why_size, "its bytes are not in the file");
		return M_NONE;
	}
	ret = fhook_kprobe_file_how(&req, why, why_size);
	if (ret < 0)
		return ret;
	return ret == FHOOK_KPROBE_JUMP ? M_JUMP : ret == FHOOK_KPROBE_TRAP ? M_TRAP : M_NONE;
}

int cli_insn_boundary(const char *path, unsigned long start, unsigned long size,
		      unsigned long addr)
{
	struct fhook_kprobe_file_req req = {
		.addr = addr, .start = start, .size = size, .size_known = true,
		.read = image_read,
	};
	struct image im = { 0 };
	int ret;

	if (!size || addr >= start + size)
		return -ERANGE;
	ret = image_load(path, &im);
	req.ctx = &im;
	req.code = ret ? NULL : image_at(&im, start, size);
	if (!req.code) {
		free(im.data);
		return ret ? ret : -EFAULT;
	}
	ret = fhook_kprobe_file_boundary(&req);
	free(im.data);
	return ret;
}

int cli_funcs_why(const char *path, const char *glob, int mode)
{
	struct cli_func_names fn = { .mode = mode };
	static const char *const names_of[] = { "site", "jump", "trap", "none", "skipped" };
	struct fhook_elf_sites es = { 0 };
	struct image im = { 0 };
	struct fhook_sym *syms = NULL, *all = NULL;
	long count[5] = { 0 };
	char *names = NULL, *all_names = NULL, why[128];
	unsigned long *skip_addrs = NULL;
	size_t nr = 0, i, total = 0, nr_all = 0, nr_skip = 0;
	int ret;

	ret = image_load(path, &im);
	if (!ret && fhook_elf_read_sites(path, &es))
		memset(&es, 0, sizeof(es));
	for (i = 0; i < es.nr; i++)
		es.addrs[i] += FHOOK_SITE_REC_ENTRY;
	if (es.nr)
		qsort(es.addrs, es.nr, sizeof(*es.addrs), addr_cmp);
	if (!ret)
		ret = fhook_elf_read_syms(path, 0, &syms, &nr, &names);
	if (ret) {
		fprintf(stderr, "fhook: funcs: %s: %s\n", path,
			ret == -ENOEXEC ? "not an " FHOOK_ARCH_NAME " ELF executable or shared object"
					: strerror(-ret));
		goto out;
	}
	/* a function is fhook's when any of its names is (fopen, _IO_fopen) */
	if (!fhook_elf_read_syms(path, FHOOK_ELF_SYMS_ALIASES, &all, &nr_all, &all_names)) {
		skip_addrs = calloc(nr_all ? nr_all : 1, sizeof(*skip_addrs));
		for (i = 0; skip_addrs && i < nr_all; i++)
			if (fhook_nokprobe(path, all_names + all[i].name))
				skip_addrs[nr_skip++] = all[i].addr;
		if (skip_addrs)
			qsort(skip_addrs, nr_skip, sizeof(*skip_addrs), addr_cmp);
	}
	/* C++ names short against the object's own functions */
	cli_func_names_add(&fn, path);
	if (!nr) {
		fprintf(stderr, "fhook: funcs: %s is stripped: no function in .symtab or "
			".dynsym to probe\n", path);
		ret = -ENOENT;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		unsigned long end = syms[i].addr + syms[i].size, limit;
		const char *name = names + syms[i].name, *skip;
		unsigned int pad;
		int m;

		if (glob && fnmatch(glob, name, 0))
			continue;

		/* free bytes after it: up to the next symbol and the next 16 bytes */
		limit = (end + 15) & ~15UL;
		if (i + 1 < nr && syms[i + 1].addr < limit)
			limit = syms[i + 1].addr > end ? syms[i + 1].addr : end;
		pad = (unsigned int)(limit - end);
		skip = fhook_nokprobe(path, name);
		if (!skip && nr_skip && bsearch(&syms[i].addr, skip_addrs, nr_skip,
						sizeof(*skip_addrs), addr_cmp))
			skip = fhook_nokprobe_libc(path);
		if (skip) {
			m = M_SKIPPED;
			snprintf(why, sizeof(why), "%s", skip);
		} else if (has_site(&es, &im, syms[i].addr)) {
			m = M_SITE;
			why[0] = 0;
		} else {
			m = method_of(&im, syms[i].addr, syms[i].size, pad, why, sizeof(why));
		}
		if (m < 0) {
			ret = m;	/* no capstone: said on stderr */
			goto out;
		}
		count[m]++;
		total++;
		printf("%s %s%s%s\n", cli_func_name(&fn, name), names_of[m], why[0] ? ": " : "", why);
	}
	printf("# %zu functions: %ld jump (%.2f%%), %ld trap, %ld site, %ld none, %ld skipped\n",
	       total, count[M_JUMP], total ? 100.0 * (double)count[M_JUMP] / (double)total : 0.0,
	       count[M_TRAP], count[M_SITE], count[M_NONE], count[M_SKIPPED]);
	ret = 0;
	if (glob && !total) {
		fprintf(stderr, "fhook: funcs: no function of %s matches %s\n", path, glob);
		ret = -ENOENT;
	}
out:
	free(syms);
	free(names);
	free(all);
	free(all_names);
	free(skip_addrs);
	free(es.addrs);
	free(es.from_mcount);
	free(im.data);
	cli_func_names_fini(&fn);
	return ret;
}
