// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook prepare [--force] FILE...: what ftrace_init_nop does at run time,
 * done once in the file (as the kernel's build does with
 * recordmcount/objtool), so that no thread can ever be caught between two
 * of the compiler's 1-byte nops when fhook rewrites them in a running
 * process.
 *
 * A file is changed only if every recorded site holds a known pad; the new
 * contents go to a temporary file in the same directory, given the old
 * file's owner, group and mode, and renamed over it.  What is handed over
 * is checked first (see check_file()): a symlink is followed and the file
 * it names is rewritten, the link stays; a file with several hard links,
 * a read-only file, and a set-id file run by someone other than its owner
 * are refused unless --force.  The site
 * sections are marked (FHOOK_SHF_PREPARED), so that a process loading the
 * file does not read its sites until it hooks one of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "arch_insn.h"
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

static bool prepare_force;

/*
 * May @path be rewritten, and which file is it?  A symlink is followed
 * (to the end of the chain) and the file it names is what is rewritten:
 * renaming over the link would turn it into a regular file, and every
 * other name of the target would keep the old contents.  *@real is that
 * file's path (malloc'd), @st its metadata.  Returns 0, or 1 with the
 * reason on stderr.
 */
static int check_file(const char *path, char **real, struct stat *st)
{
	*real = realpath(path, NULL);
	if (!*real || lstat(*real, st)) {
		fprintf(stderr, "fhook: prepare: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISREG(st->st_mode)) {
		fprintf(stderr, "fhook: prepare: %s: not a regular file\n", path);
		return 1;
	}
	if (prepare_force)
		return 0;
	if (st->st_nlink > 1) {
		fprintf(stderr, "fhook: prepare: %s: has %lu hard links; rewriting it would "
			"leave the other names with the old contents (--force rewrites it in "
			"place, for every name); file left unchanged\n", path,
			(unsigned long)st->st_nlink);
		return 1;
	}
	if (!(st->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH))) {
		fprintf(stderr, "fhook: prepare: %s: is read-only (mode %04o); --force "
			"rewrites it anyway; file left unchanged\n", path,
			(unsigned)(st->st_mode & 07777));
		return 1;
	}
	/*
	 * The new file gets the old owner and mode: a set-id program rewritten
	 * by someone else is code that runs with its owner's privileges, put
	 * there by that someone; only its owner (or --force) decides that.
	 */
	if ((st->st_mode & (S_ISUID | S_ISGID)) && st->st_uid != geteuid()) {
		fprintf(stderr, "fhook: prepare: %s: is set-%s-ID and owned by uid %u, not by "
			"you; rewrite it as its owner or with --force; file left unchanged\n",
			path, st->st_mode & S_ISUID ? "user" : "group", (unsigned)st->st_uid);
		return 1;
	}
	return 0;
}

/*
 * Write @buf as @path's new contents, keeping its owner, group and mode
 * (@st).  One name: a temporary file in the same directory renamed over
 * it, so that a process running the old file keeps it whole.  Several
 * names (--force): in place, so that every name sees the new contents.
 */
static int write_file(const char *path, const struct stat *st, const unsigned char *buf)
{
	struct stat now;
	char *tmp = NULL;
	int fd, ret = -1;

	if (st->st_nlink > 1) {
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &now) || now.st_ino != st->st_ino ||
		    now.st_dev != st->st_dev ||
		    pwrite(fd, buf, (size_t)st->st_size, 0) != st->st_size || fsync(fd))
			goto fail;
		close(fd);
		return 0;
	}
	if (asprintf(&tmp, "%s.fhook-XXXXXX", path) < 0)
		return -1;
	fd = mkstemp(tmp);
	if (fd < 0)
		goto fail;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* owner first: chown clears the set-id bits, the mode puts them back */
	if (write(fd, buf, (size_t)st->st_size) != st->st_size ||
	    ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
	     fchown(fd, st->st_uid, st->st_gid)) ||
	    fchmod(fd, st->st_mode & 07777) || fsync(fd))
		goto fail;
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	/* the name still is the file that was checked (nobody swapped it meanwhile) */
	if (lstat(path, &now) || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		errno = EBUSY;
		goto fail;
	}
	if (rename(tmp, path))
		goto fail;
	free(tmp);
	return 0;
fail:
	fprintf(stderr, "fhook: prepare: %s: cannot write%s: %s; file left unchanged\n", path,
		errno == EPERM && tmp ? " it with its owner and group" : "", strerror(errno));
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	return ret;
}

static int prepare_one(const char *arg)
{
	struct fhook_elf_sites es;
	struct fhook_elf_scan scan;
	struct fhook_site_nop nop;
	size_t i, changed = 0;
	bool marked = false;
	unsigned char *buf = NULL;
	struct stat st;
	char *path = NULL;
	Elf *elf = NULL;
	int fd = -1, ret;

	memset(&es, 0, sizeof(es));
	if (check_file(arg, &path, &st)) {
		free(path);
		return 1;
	}
	ret = fhook_elf_read_sites(path, &es);
	if (ret) {
		fprintf(stderr, "fhook: prepare: %s: %s\n", arg,
			ret == -ENOEXEC ? "not an " FHOOK_ARCH_NAME " ELF executable or shared object"
					: strerror(-ret));
		return 1;
	}
	if (!es.nr) {
		fprintf(stderr, "fhook: prepare: %s: no patchable sites (build it with "
			"$(fhook cflags))\n", arg);
		ret = 1;
		goto out;
	}
	{
		struct stat checked = st;

		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			fprintf(stderr, "fhook: prepare: %s: %s\n", arg, strerror(errno));
			ret = 1;
			goto out;
		}
		if (st.st_ino != checked.st_ino || st.st_dev != checked.st_dev) {
			fprintf(stderr, "fhook: prepare: %s: changed while being read\n", arg);
			ret = 1;
			goto out;
		}
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		fprintf(stderr, "fhook: prepare: %s: cannot read\n", arg);
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
				arg, w);
			ret = 1;
			goto out;
		}
		b = buf + off;
		if (fhook_site_classify(b, (size_t)(st.st_size - off), es.from_mcount[i],
					&nop)) {
			where(path, es.addrs[i], w, sizeof(w));
			fprintf(stderr, "fhook: prepare: %s: site %s holds "
				"%02x:%02x:%02x:%02x:%02x, which is no known pad; "
				"file left unchanged\n", arg, w, b[0], b[1], b[2], b[3], b[4]);
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
				arg);
			ret = 1;
			goto out;
		}
		marked = true;
	}
	if ((changed || marked) && write_file(path, &st, buf)) {
		ret = 1;
		goto out;
	}
	printf("%s: %zu sites, %zu rewritten\n", arg, es.nr, changed);
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	free(es.addrs);
	free(es.from_mcount);
	return ret;
}

static void prepare_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook prepare [--force] FILE...\n"
		"\n"
		"Turn every recorded site of each ELF FILE (a program or a shared library\n"
		"built with $(fhook cflags)) into a 5-byte nop, in place, once: what libfhook\n"
		"otherwise does in every process that loads it.  A file is changed only if\n"
		"each of its sites holds a known pad; its owner, group and mode are kept, and\n"
		"a symlink is followed (the file it names is rewritten).  Doing it again\n"
		"changes nothing.\n"
		"\n"
		"  --force              rewrite a file with several hard links, a read-only\n"
		"                       file, or a set-id file of another owner, which are\n"
		"                       otherwise refused\n"
		"\n"
		"Exit status: 0; 1 when a file could not be prepared; 2 for bad usage.\n");
}

int cmd_prepare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i, ret = 0;

	prepare_force = false;
	optind = 1;
	/* '+': the first FILE ends the options, as before getopt */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			prepare_force = true;
			break;
		case 'h':
			prepare_usage(stdout);
			return 0;
		default:
			prepare_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		prepare_usage(stderr);
		return 2;
	}
	for (i = optind; i < argc; i++)
		ret |= prepare_one(argv[i]);
	return ret;
}
