// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook patch --func TARGET --with LIB.so:SYMBOL [--caller SYM]... -- PROG [ARGS]
 *
 * Runs PROG with libfhook preloaded; libfhook's livepatch constructor
 * (lib/livepatch/preload.c) reads the FHOOK_LP_* variables set here and
 * redirects TARGET to SYMBOL of LIB.so for calls made from the named
 * callers (every caller without --caller) before PROG's main() runs.  If
 * that cannot be done exactly, PROG is not run and we exit with 125.
 * The shared runner below also serves `fhook inject` (cli/inject.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "with_check.h"

#define LP_EXIT_SETUP	125

int lp_cli_run(const char *mode, char **prog_argv, const char *callers);
int cli_lp_attached(const char *mode, pid_t pid, const char *name, const char *func,
		    const char *what, const char *callers);
int cli_lp_list(pid_t pid);
pid_t cli_attach_parse_pid(const char *cmd, const char *s);

/* Append @name to the comma-separated list *@list. */
int lp_cli_add_caller(char **list, const char *name)
{
	char *n;

	if (!*name || strchr(name, ',')) {
		fprintf(stderr, "fhook: bad caller name '%s'\n", name);
		return -EINVAL;
	}
	if (asprintf(&n, "%s%s%s", *list ? *list : "", *list ? "," : "", name) < 0)
		return -ENOMEM;
	free(*list);
	*list = n;
	return 0;
}

/*
 * Run the program with the FHOOK_LP_* variables already set (but for
 * MODE, CALLERS and REPORT, set here), then print the summary the
 * program's libfhook wrote at exit.  Returns the exit status to use.
 */
int lp_cli_run(const char *mode, char **prog_argv, const char *callers)
{
	char report[] = "/tmp/fhook-lp-XXXXXX", buf[4096];
	int fd, status;
	size_t n, total = 0;
	FILE *f;

	if (cli_check_program(prog_argv[0]))
		return LP_EXIT_SETUP;
	fd = mkstemp(report);
	if (fd < 0) {
		fprintf(stderr, "fhook: %s: cannot create a report file: %s\n", mode,
			strerror(errno));
		return LP_EXIT_SETUP;
	}
	close(fd);
	setenv("FHOOK_LP_MODE", mode, 1);
	setenv("FHOOK_LP_REPORT", report, 1);
	if (callers)
		setenv("FHOOK_LP_CALLERS", callers, 1);
	else
		unsetenv("FHOOK_LP_CALLERS");
	status = cli_run_preloaded(prog_argv, true);

	f = fopen(report, "re");
	if (f) {
		while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
			buf[n] = 0;
			if (!total && !strncmp(buf, "setup-failed", 12)) {
				fprintf(stderr, "fhook: %s: %s was not run: the %s could not be "
					"applied as asked (nothing was changed)\n", mode,
					prog_argv[0], mode);
				status = LP_EXIT_SETUP;
				break;
			}
			fputs(buf, stderr);
			total += n;
		}
		fclose(f);
	}
	if (!total && status != LP_EXIT_SETUP)
		fprintf(stderr, "fhook: %s: no summary: %s exited with status %d before "
			"libfhook could write it (it died, replaced itself with exec, or "
			"libfhook was not loaded into it)\n", mode, prog_argv[0], status);
	unlink(report);
	return status;
}

static void patch_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook patch --func TARGET --with LIB.so:SYMBOL [--caller SYM]... -- PROG [ARGS]\n"
		"       fhook patch -p PID [--name NAME] --func TARGET --with LIB.so:SYMBOL [--caller SYM]...\n"
		"       fhook patch -p PID --list\n"
		"\n"
		"Run PROG with calls of TARGET made from the named callers redirected to\n"
		"SYMBOL of LIB.so (every caller without --caller).  A call is the caller's\n"
		"when its return address lies inside the caller's symbol; a caller that\n"
		"reaches TARGET with a tail jump is not seen (a warning says so).\n"
		"SYMBOL may call TARGET: that call runs the original.\n"
		"\n"
		"  --func TARGET          the function to redirect; without an fhook site\n"
		"                         (a program not built for fhook), a kprobe on\n"
		"                         its entry redirects the calls\n"
		"  --with LIB.so:SYMBOL   the replacement, same prototype as TARGET\n"
		"  --caller SYM           redirect only calls made from SYM (repeatable)\n"
		"  -p, --pid PID          patch the running process PID instead; the patch\n"
		"                         stays until `fhook unpatch -p PID NAME`\n"
		"  --name NAME            the patch's name in PID (default: TARGET)\n"
		"  --list                 with -p: the patches applied in PID, with their counts\n"
		"\n"
		"Exit status: PROG's; 125 if the patch could not be applied (PROG not run);\n"
		"2 for bad usage.\n");
}

int cmd_patch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "func", required_argument, NULL, 'f' },
		{ "with", required_argument, NULL, 'w' },
		{ "caller", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *func = NULL, *with = NULL, *callers = NULL, *colon, *lib, path[PATH_MAX];
	char *name = NULL;
	bool list = false;
	pid_t pid = 0;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+hp:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = cli_attach_parse_pid("patch", optarg);
			if (pid < 0)
				return 2;
			break;
		case 'n':
			name = optarg;
			break;
		case 'l':
			list = true;
			break;
		case 'f':
			func = optarg;
			break;
		case 'w':
			with = optarg;
			break;
		case 'c':
			if (lp_cli_add_caller(&callers, optarg))
				return 2;
			break;
		case 'h':
			patch_usage(stdout);
			return 0;
		default:
			patch_usage(stderr);
			return 2;
		}
	}
	if (list && pid && !func && !with && optind == argc)
		return cli_lp_list(pid);
	if (!func || !with || (pid ? optind < argc || list : optind >= argc)) {
		fprintf(stderr, "fhook: patch: %s\n", list ? "--list goes with -p PID alone" :
			!func ? "--func is required" : !with ? "--with is required" :
			pid ? "-p PID takes no program" : "no program to run after --");
		patch_usage(stderr);
		return 2;
	}
	colon = strrchr(with, ':');
	if (!colon || colon == with || !colon[1]) {
		fprintf(stderr, "fhook: patch: --with needs LIB.so:SYMBOL, got '%s'\n", with);
		return 2;
	}
	lib = strndup(with, colon - with);
	if (access(lib, R_OK)) {
		fprintf(stderr, "fhook: patch: %s: %s\n", lib, strerror(errno));
		free(lib);
		return 2;
	}
	/* the program may chdir: hand it an absolute path */
	if (!realpath(lib, path)) {
		fprintf(stderr, "fhook: patch: %s: %s\n", lib, strerror(errno));
		free(lib);
		return 2;
	}
	free(lib);
	if (pid) {
		char *abs;

		if (asprintf(&abs, "%s:%s", path, colon + 1) < 0)
			return 1;
		ret = cli_lp_attached("patch", pid, name, func, abs, callers);
		free(abs);
		free(callers);
		return ret;
	}
	{
		char why[600];

		if (lp_check_with(path, colon + 1, why, sizeof(why))) {
			fprintf(stderr, "fhook: patch: %s\n", why);
			return 2;
		}
	}
	{
		char *abs;

		if (asprintf(&abs, "%s:%s", path, colon + 1) < 0)
			return 2;
		setenv("FHOOK_LP_WITH", abs, 1);
		free(abs);
	}
	setenv("FHOOK_LP_FUNC", func, 1);
	ret = lp_cli_run("patch", argv + optind, callers);
	free(callers);
	return ret;
}
