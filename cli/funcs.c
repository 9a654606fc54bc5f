// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook funcs [-v] PROG: the traceable functions of a program and of the
 * instrumented libraries it loads, read from the files; PROG is not run
 * (its libraries are resolved the way ldd does, by the dynamic loader in
 * list mode).  C++ functions by their short names, as report shows them
 * (lib/events/cxxname.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "arch_insn.h"
#include "events/cxxname.h"
#include "events/decode.h"
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
	if (asprintf(&cmd, "LD_TRACE_LOADED_OBJECTS=1 " FHOOK_ARCH_LOADER " '%s' "
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

int cli_func_names_mode(const char *arg)
{
	if (!strcmp(arg, "short") || !strcmp(arg, "simple"))
		return DEC_DEMANGLE_SHORT;
	if (!strcmp(arg, "full"))
		return DEC_DEMANGLE_FULL;
	if (!strcmp(arg, "no"))
		return DEC_DEMANGLE_NO;
	return -EINVAL;
}

int cli_func_names_add(struct cli_func_names *fn, const char *path)
{
	struct fhook_sym *syms;
	char **nn, *names;
	size_t nr, i;
	int ret;

	if (fn->mode != DEC_DEMANGLE_SHORT)
		return 0;
	if (!fn->set && !(fn->set = cxx_set_new()))
		return -ENOMEM;
	/* every function symbol, aliases too: what a recording keeps of the file */
	ret = fhook_elf_read_syms(path, FHOOK_ELF_SYMS_ALIASES, &syms, &nr, &names);
	if (ret)
		return ret;
	nn = realloc(fn->tables, (fn->nr_tables + 1) * sizeof(*nn));
	if (!nn) {
		free(syms);
		free(names);
		return -ENOMEM;
	}
	fn->tables = nn;
	fn->tables[fn->nr_tables++] = names;
	for (i = 0; i < nr; i++)
		if (cxx_mangled(names + syms[i].name) && cxx_set_add(fn->set, names + syms[i].name))
			break;
	free(syms);
	return i < nr ? -ENOMEM : 0;
}

const char *cli_func_name(struct cli_func_names *fn, const char *raw)
{
	const char *s;

	if (!cxx_mangled(raw) || fn->mode == DEC_DEMANGLE_NO)
		return raw;
	if (fn->mode == DEC_DEMANGLE_SHORT && fn->set && (s = cxx_set_short(fn->set, raw)))
		return s;
	free(fn->buf);
	fn->buf = cxx_name(raw, fn->mode == DEC_DEMANGLE_FULL ? CXX_SIG : CXX_SHORT);
	return fn->buf ? fn->buf : raw;
}

void cli_func_names_fini(struct cli_func_names *fn)
{
	cxx_set_free(fn->set);
	while (fn->nr_tables)
		free(fn->tables[--fn->nr_tables]);
	free(fn->tables);
	free(fn->buf);
	memset(fn, 0, sizeof(*fn));
}

static int addr_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static int list_object(struct cli_func_names *fn, const char *path, bool verbose, bool is_main)
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
				ret == -ENOEXEC ? "not an " FHOOK_ARCH_NAME " ELF executable or shared object"
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
	for (j = 0; j < es.nr; j++)
		es.addrs[j] += FHOOK_SITE_REC_ENTRY;
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
			       cli_func_name(fn, names + syms[i].name), is_main ? "" : " ",
			       is_main ? "" : strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
		else
			printf("%s\n", cli_func_name(fn, names + syms[i].name));
	}
	free(syms);
	free(names);
	free(es.addrs);
	free(es.from_mcount);
	return ret ? ret : 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fhook funcs [-v|--verbose] [--demangle=MODE] PROG\n"
		"       fhook funcs -w|--why [--demangle=MODE] OBJECT [GLOB]\n"
		"\n"
		"The traceable functions of PROG and of the libraries it loads (PROG is not run),\n"
		"one a line; with --why, how a kprobe would be placed on each function of OBJECT\n"
		"(those whose name matches GLOB: what -e 'p OBJECT:GLOB' probes).\n"
		"  -v, --verbose        each function's address and size, and its library\n"
		"  -w, --why            the kprobe method of each function of OBJECT, and why not a\n"
		"                       jump: site, jump, trap: REASON, none: REASON, skipped:\n"
		"                       REASON (fhook runs it itself: a glob leaves it out)\n"
		"  --demangle=MODE      C++ names: short (ns::Class::method, the default; functions\n"
		"                       that share one say what tells them apart: parameters,\n"
		"                       template arguments), full (the signature, as c++filt) or\n"
		"                       no (mangled)\n"
		"  -h, --help           this help\n");
}

int cmd_funcs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "why", no_argument, NULL, 'w' },
		{ "demangle", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cli_func_names fn = { .mode = DEC_DEMANGLE_SHORT };
	bool verbose = false, why = false;
	char **paths;
	int i, nr, ret, opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+vwh", opts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		case 'w':
			why = true;
			break;
		case 'M':
			fn.mode = cli_func_names_mode(optarg);
			if (fn.mode < 0) {
				fprintf(stderr, "fhook: funcs: --demangle %s: short, full or no\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 && !(why && optind == argc - 2)) {
		usage(stderr);
		return 2;
	}
	if (why)
		return cli_funcs_why(argv[optind], argv[optind + 1], fn.mode) ? 1 : 0;
	if (cli_program_objects(argv[optind], &paths, &nr))
		return 1;
	/* a C++ name is short against every function of the program, as report's */
	for (i = 0; i < nr; i++)
		cli_func_names_add(&fn, paths[i]);
	ret = list_object(&fn, paths[0], verbose, true);
	if (ret < 0)
		goto out;
	if (ret == 0) {
		fprintf(stderr, "fhook: funcs: %s has no patchable sites (build it with "
			"$(fhook cflags))\n", paths[0]);
	}
	for (i = 1; i < nr; i++)
		list_object(&fn, paths[i], verbose, false);
out:
	for (i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	cli_func_names_fini(&fn);
	return ret <= 0 ? 1 : 0;
}
