// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook inject --func TARGET --retval VALUE [--caller SYM]... [--times N]
 *              [--interval N] [--probability PERCENT] [--seed S] -- PROG [ARGS]
 *
 * The kernel's fail_function with its fault attributes, by caller: matching
 * calls of TARGET return VALUE without running it.  At exit, a summary of
 * the calls seen and failed per caller.  The work is done inside PROG by
 * libfhook (lib/livepatch/preload.c); see cli/patch.c for the runner.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int lp_cli_run(const char *mode, char **prog_argv, const char *callers);
int lp_cli_add_caller(char **list, const char *name);
int cli_lp_attached(const char *mode, pid_t pid, const char *name, const char *func,
		    const char *what, const char *callers);
pid_t cli_attach_parse_pid(const char *cmd, const char *s);

static void inject_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook inject --func TARGET --retval VALUE [--caller SYM]... [--times N]\n"
		"                    [--interval N] [--probability PERCENT] [--seed S] -- PROG [ARGS]\n"
		"       fhook inject -p PID [--name NAME] --func TARGET --retval VALUE [...]\n"
		"\n"
		"Run PROG with calls of TARGET made from the named callers (every caller\n"
		"without --caller) returning VALUE at once, without running TARGET, as the\n"
		"kernel's fail_function does.  TARGET needs no fhook site: in a program not\n"
		"built for fhook a kprobe on its entry makes the call return (as\n"
		"bpf_override_return).  At exit a summary gives the calls seen and failed\n"
		"per caller.\n"
		"\n"
		"  --func TARGET          the function to make fail\n"
		"  --retval VALUE         what it returns instead: any 64-bit value\n"
		"  --caller SYM           fail only calls made from SYM (repeatable)\n"
		"  -p, --pid PID          change the running process PID instead; it stays\n"
		"                         so until `fhook unpatch -p PID NAME`, and `fhook\n"
		"                         patch -p PID --list` shows the counts\n"
		"  --name NAME            with -p: the injection's name (default: TARGET)\n"
		"\n"
		"Which calls fail follows the kernel's fault attributes, in this order:\n"
		"  --probability PERCENT  a call fails with this probability (default 100)\n"
		"  --times N              fail at most N times; -1: no limit (default)\n"
		"  --interval N           only every N-th eligible call may fail (default 1)\n"
		"  --seed S               seed of the random sequence (default 0): with a\n"
		"                         fixed seed a single-threaded run fails the same calls\n"
		"A call is eligible when it comes from a named caller and times is not used\n"
		"up; interval counts eligible calls; the draw is made for every call that\n"
		"passes the interval.\n"
		"\n"
		"Exit status: PROG's; 125 if the injection could not be set up (PROG not\n"
		"run); 2 for bad usage.\n");
}

static int parse_long(const char *opt, const char *s, long long min, long long max,
		      long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	if (errno || end == s || *end || *out < min || *out > max) {
		fprintf(stderr, "fhook: inject: bad %s '%s' (%lld to %lld)\n", opt, s, min, max);
		return -EINVAL;
	}
	return 0;
}

int cmd_inject(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "func", required_argument, NULL, 'f' },
		{ "retval", required_argument, NULL, 'r' },
		{ "caller", required_argument, NULL, 'c' },
		{ "times", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "probability", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const vars[] = {
		['r'] = "FHOOK_LP_RETVAL", ['t'] = "FHOOK_LP_TIMES",
		['i'] = "FHOOK_LP_INTERVAL", ['q'] = "FHOOK_LP_PROBABILITY",
		['s'] = "FHOOK_LP_SEED",
	};
	char *func = NULL, *callers = NULL, *end, *name = NULL;
	bool have_retval = false;
	pid_t pid = 0;
	long long v;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+hp:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = cli_attach_parse_pid("inject", optarg);
			if (pid < 0)
				return 2;
			break;
		case 'n':
			name = optarg;
			break;
		case 'f':
			func = optarg;
			break;
		case 'c':
			if (lp_cli_add_caller(&callers, optarg))
				return 2;
			break;
		case 'r':
			/*
			 * Any 64-bit value: negative errnos, pointers, -1, as a
			 * signed [-2^63, 2^63) or an unsigned [0, 2^64) number;
			 * nothing outside (strtoull would negate "-2^64+1" to 1).
			 */
			errno = 0;
			v = strtoll(optarg, &end, 0);
			if (errno == ERANGE && !strchr(optarg, '-')) {
				errno = 0;
				strtoull(optarg, &end, 0);
			}
			if (errno || end == optarg || *end) {
				fprintf(stderr, "fhook: inject: bad --retval '%s'%s\n", optarg,
					errno == ERANGE ? ": outside the 64-bit range [-2^63, 2^64)"
							: "");
				return 2;
			}
			have_retval = true;
			setenv(vars[c], optarg, 1);
			break;
		case 't':
		case 'i':
		case 'q':
		case 's':
			if (parse_long(c == 't' ? "--times" : c == 'i' ? "--interval" :
				       c == 'q' ? "--probability" : "--seed", optarg,
				       c == 't' ? -1 : 0, c == 'q' ? 100 : LLONG_MAX, &v))
				return 2;
			setenv(vars[c], optarg, 1);
			break;
		case 'h':
			inject_usage(stdout);
			return 0;
		default:
			inject_usage(stderr);
			return 2;
		}
	}
	if (!func || !have_retval || (pid ? optind < argc : optind >= argc)) {
		fprintf(stderr, "fhook: inject: %s\n", !func ? "--func is required" :
			!have_retval ? "--retval is required" :
			pid ? "-p PID takes no program" : "no program to run after --");
		inject_usage(stderr);
		return 2;
	}
	if (pid) {
		char *what;

#define V(n, d) (getenv(n) ? getenv(n) : (d))
		if (asprintf(&what, "%s\t%s\t%s\t%s\t%s", V("FHOOK_LP_RETVAL", "0"),
			     V("FHOOK_LP_PROBABILITY", "100"), V("FHOOK_LP_INTERVAL", "1"),
			     V("FHOOK_LP_TIMES", "-1"), V("FHOOK_LP_SEED", "0")) < 0)
			return 1;
#undef V
		ret = cli_lp_attached("inject", pid, name, func, what, callers);
		free(what);
		free(callers);
		return ret;
	}
	setenv("FHOOK_LP_FUNC", func, 1);
	ret = lp_cli_run("inject", argv + optind, callers);
	free(callers);
	return ret;
}
