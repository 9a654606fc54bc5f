// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook prepare FILE...: what ftrace_init_nop does at run time, done once
 * in the file (as the kernel's build does with recordmcount/objtool), so
 * that no thread can ever be caught between two of the compiler's 1-byte
 * nops when fhook rewrites them in a running process.
 *
 * A file is changed only if every recorded site holds a known pad; the new
 * contents go to a temporary file renamed over the old one.  The site
 * sections are marked (FHOOK_SHF_PREPARED), so that a process loading the
 * file does not read its sites until it hooks one of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include <fhook/internal/elf.h>
#include <fhook/internal/site.h>

/* File offset of link-time address @addr, or -1. */
static long addr_to_off(Elf *elf, unsigned long addr, size_t len)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr + len <= ph.p_vaddr + ph.p_filesz)
			return (long)(ph.p_offset + (addr - ph.p_vaddr));
	}
	return -1;
}

static void where(const char *path, unsigned long addr, char *buf, size_t size)
{
	struct fhook_sym *syms;
	size_t nr, i;
	char *names;

	snprintf(buf, size, "%#lx", addr);
	if (fhook_elf_read_syms(path, 0, &syms, &nr, &names))
		return;
	for (i = 0; i < nr; i++)
		if (addr >= syms[i].addr && addr < syms[i].addr + syms[i].size) {
			snprintf(buf, size, "%s+0x%lx/0x%x (%#lx)", names + syms[i].name,
				 addr - syms[i].addr, syms[i].size, addr);
			break;
		}
	free(syms);
	free(names);
}

static int prepare_one(const char *path)
{
	struct fhook_elf_sites es;
	struct fhook_elf_scan scan;
	struct fhook_site_nop nop;
	size_t i, changed = 0;
	bool marked = false;
	unsigned char *buf = NULL;
	struct stat st;
	char *tmp = NULL;
	Elf *elf = NULL;
	int fd = -1, ret;

	ret = fhook_elf_read_sites(path, &es);
	if (ret) {
		fprintf(stderr, "fhook: prepare: %s: %s\n", path,
			ret == -ENOEXEC ? "not an x86-64 ELF executable or shared object"
					: strerror(-ret));
		return 1;
	}
	if (!es.nr) {
		fprintf(stderr, "fhook: prepare: %s: no patchable sites (build it with "
			"$(fhook cflags))\n", path);
		ret = 1;
		goto out;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "fhook: prepare: %s: %s\n", path, strerror(errno));
		ret = 1;
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		fprintf(stderr, "fhook: prepare: %s: cannot read\n", path);
		ret = 1;
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)buf, (size_t)st.st_size);
	if (!elf) {
		ret = 1;
		goto out;
	}
	for (i = 0; i < es.nr; i++) {
		long off = addr_to_off(elf, es.addrs[i], 6);
		unsigned char *b;
		char w[600];

		if (off < 0) {
			where(path, es.addrs[i], w, sizeof(w));
			fprintf(stderr, "fhook: prepare: %s: site %s is not in the file's code\n",
				path, w);
			ret = 1;
			goto out;
		}
		b = buf + off;
		if (fhook_site_classify(b, (size_t)(st.st_size - off), es.from_mcount[i],
					&nop)) {
			where(path, es.addrs[i], w, sizeof(w));
			fprintf(stderr, "fhook: prepare: %s: site %s holds "
				"%02x:%02x:%02x:%02x:%02x, which is no known pad; "
				"file left unchanged\n", path, w, b[0], b[1], b[2], b[3], b[4]);
			ret = 1;
			goto out;
		}
		if (!nop.len)
			continue;
		memcpy(b, nop.bytes, nop.len);
		changed++;
	}
	/*
	 * Mark the site sections, so that start-up knows without reading a
	 * single site that they are all nops already.
	 */
	if (fhook_elf_scan(path, &scan) || !scan.prepared) {
		if (fhook_elf_mark_prepared(buf, (size_t)st.st_size) <= 0) {
			fprintf(stderr, "fhook: prepare: %s: cannot mark the site sections\n",
				path);
			ret = 1;
			goto out;
		}
		marked = true;
	}
	if (changed || marked) {
		int tfd;

		if (asprintf(&tmp, "%s.fhook-XXXXXX", path) < 0) {
			ret = 1;
			goto out;
		}
		tfd = mkstemp(tmp);
		if (tfd < 0 || write(tfd, buf, (size_t)st.st_size) != st.st_size ||
		    fchmod(tfd, st.st_mode & 07777) || fsync(tfd) || close(tfd) ||
		    rename(tmp, path)) {
			fprintf(stderr, "fhook: prepare: %s: cannot write: %s\n", path,
				strerror(errno));
			unlink(tmp);
			ret = 1;
			goto out;
		}
	}
	printf("%s: %zu sites, %zu rewritten\n", path, es.nr, changed);
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(tmp);
	free(es.addrs);
	free(es.from_mcount);
	return ret;
}

int cmd_prepare(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: fhook prepare FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		ret |= prepare_one(argv[i]);
	return ret;
}
