// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The process's memory map (/proc/PID/maps) and the symbols of the
 * objects mapped in it, read from their files.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "att.h"

void att_free_maps(struct cli_attach *a)
{
	int i;

	for (i = 0; i < a->nr_maps; i++)
		free(a->maps[i].path);
	free(a->maps);
	a->maps = NULL;
	a->nr_maps = 0;
}

int att_read_maps(struct cli_attach *a)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	att_free_maps(a);
	snprintf(path, sizeof(path), "/proc/%d/maps", a->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perms[8];
		int n = 0;
		struct att_map *m;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &s, &e, perms, &off, &n) < 4)
			continue;
		line[strcspn(line, "\n")] = 0;
		m = realloc(a->maps, (a->nr_maps + 1) * sizeof(*m));
		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		a->maps = m;
		m = &a->maps[a->nr_maps++];
		m->start = s;
		m->end = e;
		m->off = off;
		m->exec = perms[2] == 'x';
		m->path = n && line[n] == '/' ? strdup(line + n) : NULL;
	}
	fclose(f);
	return 0;
}

/* libc's first mapping (libc.so.6, or an older glibc's libc-2.x.so), or NULL. */
const struct att_map *att_libc(struct cli_attach *a)
{
	return att_object_named(a, "libc.so") ?: att_object_named(a, "libc-");
}

/*
 * A process caught as it starts (a command run with `&` and attached to at
 * once) may still be in glibc's dynamic loader, libc not yet mapped: its
 * dlopen() is a few milliseconds away, not missing.  Wait for it, for at
 * most 2 s, and then for the loader to map what comes after libc (two
 * reads 5 ms apart the same); 0 then, or at once when libc was there at
 * the first look or there is no glibc loader to wait for (a static
 * program; musl's loader, which is its libc).
 */
int att_wait_for_libc(struct cli_attach *a)
{
	unsigned long last_end = 0;
	int i, last_nr = -1, ret;

	if (att_libc(a) || !att_object_named(a, "ld-linux"))
		return 0;	/* the common case: started long ago */
	for (i = 0; i < 400; i++) {
		usleep(5000);
		ret = att_read_maps(a);
		if (ret == -ENOENT || ret == -ESRCH)
			fprintf(stderr, "fhook: %s: process %d exited\n", a->cmd, a->pid);
		if (ret)
			return ret;
		if (!att_object_named(a, "ld-linux"))
			return 0;	/* it exec'd a program without one */
		if (!att_libc(a))
			continue;
		if (a->nr_maps == last_nr && a->maps[a->nr_maps - 1].end == last_end)
			return 0;
		last_nr = a->nr_maps;
		last_end = a->maps[a->nr_maps - 1].end;
	}
	if (att_libc(a))
		return 0;
	fprintf(stderr, "fhook: %s: process %d is still being started by its dynamic loader "
		"(no libc mapped after 2 s)\n", a->cmd, a->pid);
	return -EAGAIN;
}

const struct att_map *att_map_of(struct cli_attach *a, unsigned long addr)
{
	int i;

	for (i = 0; i < a->nr_maps; i++)
		if (addr >= a->maps[i].start && addr < a->maps[i].end)
			return &a->maps[i];
	return NULL;
}

const char *att_base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

/* The first mapping of the object whose file name starts with @prefix. */
const struct att_map *att_object_named(struct cli_attach *a, const char *prefix)
{
	int i;

	for (i = 0; i < a->nr_maps; i++)
		if (a->maps[i].path && !a->maps[i].off &&
		    !strncmp(att_base_name(a->maps[i].path), prefix, strlen(prefix)))
			return &a->maps[i];
	return NULL;
}

/*
 * The run-time address of the function @name of the object mapped at @m
 * (its mapping of file offset 0), from .symtab or .dynsym; 0 if none.
 */
unsigned long att_object_sym(const struct att_map *m, const char *name)
{
	unsigned long addr = 0, bias = 0, lo = ~0UL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t i, n;
	Elf *elf;
	int fd;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		goto out;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lo)
			lo = ph.p_vaddr;
	}
	if (eh.e_type == ET_DYN && lo != ~0UL)
		bias = m->start - (lo & ~4095UL);
	while ((scn = elf_nextscn(elf, scn)) && !addr) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				addr = bias + s.st_value;
				break;
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return addr;
}

int cli_attach_objects(pid_t pid, char ***paths, int *nr)
{
	struct cli_attach a = { .pid = pid };
	char exe[PATH_MAX], link[64];
	ssize_t n;
	int i, j, ret;

	*paths = NULL;
	*nr = 0;
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = 0;
	ret = att_read_maps(&a);
	if (ret)
		return ret;
	*paths = calloc(a.nr_maps + 1, sizeof(**paths));
	if (!*paths) {
		att_free_maps(&a);
		return -ENOMEM;
	}
	(*paths)[(*nr)++] = strdup(exe);
	for (i = 0; i < a.nr_maps; i++) {
		const char *p = a.maps[i].path;

		if (!p || a.maps[i].off || !strcmp(p, exe) || strstr(p, " (deleted)"))
			continue;
		for (j = 0; j < *nr; j++)
			if (!strcmp((*paths)[j], p))
				break;
		if (j == *nr)
			(*paths)[(*nr)++] = strdup(p);
	}
	att_free_maps(&a);
	return 0;
}
