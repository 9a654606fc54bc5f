// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook funcs [-v] PROG: the traceable functions of a program and of the
 * instrumented libraries it loads, read from the files; PROG is not run
 * (its libraries are resolved the way ldd does, by the dynamic loader in
 * list mode).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include <fhook/internal/elf.h>

int cli_program_objects(const char *prog, char ***pathsp, int *nrp)
{
	char **paths = NULL, line[4096], *cmd = NULL;
	int nr = 0;
	FILE *p;

	if (access(prog, R_OK)) {
		fprintf(stderr, "fhook: %s: %s\n", prog, strerror(errno));
		return -errno;
	}
	paths = calloc(1, sizeof(*paths));
	paths[nr++] = strdup(prog);
	/* the loader in list mode: prints "name => path (addr)" for each */
	if (asprintf(&cmd, "LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 '%s' "
		     "2>/dev/null", prog) < 0)
		goto done;
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		goto done;
	while (fgets(line, sizeof(line), p)) {
		char *arrow = strstr(line, "=> "), *path, *sp;

		if (!arrow)
			continue;
		path = arrow + 3;
		sp = strstr(path, " (");
		if (!sp || path[0] != '/')
			continue;
		*sp = 0;
		paths = realloc(paths, (nr + 1) * sizeof(*paths));
		paths[nr++] = strdup(path);
	}
	pclose(p);
done:
	*pathsp = paths;
	*nrp = nr;
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static int list_object(const char *path, bool verbose, bool is_main)
{
	struct fhook_elf_sites es;
	struct fhook_sym *syms;
	size_t nr, i, j;
	char *names;
	int ret;

	ret = fhook_elf_read_sites(path, &es);
	if (ret) {
		if (is_main)
			fprintf(stderr, "fhook: funcs: %s: %s\n", path,
				ret == -ENOEXEC ? "not an x86-64 ELF executable or shared object"
						: strerror(-ret));
		return ret;
	}
	if (!es.nr) {
		free(es.addrs);
		free(es.from_mcount);
		return 0;
	}
	if (fhook_elf_read_syms(path, 0, &syms, &nr, &names)) {
		syms = NULL;
		nr = 0;
		names = NULL;
	}
	/* sites and symbols, both sorted: walk them together */
	qsort(es.addrs, es.nr, sizeof(*es.addrs), addr_cmp);
	if (!nr) {
		fprintf(stderr, "fhook: funcs: %s: %zu patchable sites but no symbols to name "
			"them (stripped? fhook needs .symtab, or .dynsym for exported "
			"functions)\n", path, es.nr);
		ret = -ENOENT;
	}
	for (i = 0, j = 0; i < nr; i++) {
		while (j < es.nr && es.addrs[j] < syms[i].addr)
			j++;
		if (j == es.nr || es.addrs[j] >= syms[i].addr + syms[i].size)
			continue;
		if (verbose)
			printf("%016lx %6u %s%s%s\n", syms[i].addr, syms[i].size,
			       names + syms[i].name, is_main ? "" : " ",
			       is_main ? "" : strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
		else
			printf("%s\n", names + syms[i].name);
	}
	free(syms);
	free(names);
	free(es.addrs);
	free(es.from_mcount);
	return ret ? ret : 1;
}

int cmd_funcs(int argc, char **argv)
{
	bool verbose = false, why = false;
	char **paths;
	int i, nr, ret, opt;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--verbose"))
			argv[i] = "-v";
		else if (!strcmp(argv[i], "--why"))
			argv[i] = "-w";
	optind = 1;
	while ((opt = getopt(argc, argv, "+vw")) != -1) {
		if (opt == 'v')
			verbose = true;
		else if (opt == 'w')
			why = true;
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: fhook funcs [-v|--verbose] PROG\n"
			"       fhook funcs --why OBJECT\n");
		return 2;
	}
	if (why)
		return cli_funcs_why(argv[optind]) ? 1 : 0;
	if (cli_program_objects(argv[optind], &paths, &nr))
		return 1;
	ret = list_object(paths[0], verbose, true);
	if (ret < 0)
		return 1;
	if (ret == 0) {
		fprintf(stderr, "fhook: funcs: %s has no patchable sites (build it with "
			"$(fhook cflags))\n", paths[0]);
	}
	for (i = 1; i < nr; i++)
		list_object(paths[i], verbose, false);
	for (i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	return ret == 0 ? 1 : 0;
}
