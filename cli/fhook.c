// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook - the command.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "arch_insn.h"
#include "cli.h"

/*
 * One 5-byte pad at every function entry (aarch64: two words before it,
 * two at it; FHOOK_SITE_CFLAG).  -fpatchable-function-entry
 * works for PIE and shared objects alike, with gcc and clang.  With -B,
 * GCC assembles through fhook's front end (cli/gcc_as.c), which puts each
 * site's record into its function's COMDAT group, as GCC 13 does: without
 * it, GCC 12 cannot link most C++ libraries.  clang does not need it and
 * does not use it.
 */
static const char cflags[] = FHOOK_SITE_CFLAG;

static void print_cflags(void)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			/* the build tree, else an installed prefix */
			snprintf(dir, sizeof(dir), "%s/gcc-as/as", exe);
			if (access(dir, X_OK)) {
				snprintf(dir, sizeof(dir), "%s/../libexec/fhook/as", exe);
				if (access(dir, X_OK))
					dir[0] = 0;
			}
			if (dir[0] && realpath(dir, exe)) {
				*strrchr(exe, '/') = 0;
				printf("%s -B%s/\n", cflags, exe);
				return;
			}
		}
	}
	puts(cflags);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fhook <command> [args]\n"
		"\n"
		"commands:\n"
		"  cflags              print the compiler flags that make a program traceable\n"
		"  prepare [--force] FILE...  turn every site of ELF files into a 5-byte nop, in place\n"
		"  funcs [-v] PROG     list the traceable functions of PROG and its libraries\n"
		"  funcs --why OBJECT  how a kprobe would be placed on each of its functions, and why\n"
		"  patch ...           redirect a function, for chosen callers (fhook patch -h)\n"
		"  unpatch -p PID [NAME]  remove patches applied with patch/inject -p\n"
		"  inject ...          make a function fail, for chosen callers (fhook inject -h)\n"
		"  trace ...           fprobe and kprobe events with the kernel's syntax, live;\n"
		"                      p:/r: events need no fhook flags (fhook trace -h)\n"
		"  record ...          record every call, or chosen events, to a file (fhook record -h)\n"
		"  replay [PATH]       print a recording: text, json, chrome, graph, perfetto\n"
		"  report [PATH]       time per function in a recording (fhook report -h)\n"
		"  info [--json] [PATH]  what a recording is: command, processes, times, counts\n"
		"  version             print the version\n"
		"  help                print this list\n"
		"\n"
		"fhook COMMAND -h prints the usage of a command.\n");
}

/* "fhook CMD -h": for the commands that have no options of their own */
static bool wants_help(int argc, char **argv)
{
	return argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "cflags")) {
		if (wants_help(argc, argv))
			printf("usage: fhook cflags\n\n"
			       "Print the compiler flags that make a program traceable:\n"
			       "cc $(fhook cflags) -o prog prog.c\n");
		else
			print_cflags();
		return 0;
	}
	if (!strcmp(argv[1], "prepare"))
		return cmd_prepare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "funcs"))
		return cmd_funcs(argc - 1, argv + 1);
	if (!strcmp(argv[1], "patch") && cmd_patch)
		return cmd_patch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "unpatch") && cmd_unpatch)
		return cmd_unpatch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "inject") && cmd_inject)
		return cmd_inject(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace") && cmd_trace)
		return cmd_trace(argc - 1, argv + 1);
	if (!strcmp(argv[1], "record") && cmd_record)
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "replay") && cmd_replay)
		return cmd_replay(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report") && cmd_report)
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "info") && cmd_info)
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		if (wants_help(argc, argv))
			printf("usage: fhook version\n\nPrint fhook's version.\n");
		else
			puts("fhook " FHOOK_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "fhook: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
