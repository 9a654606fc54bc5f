// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook trace -e SPEC... [--caller SYM]... [-o FILE] [--format text|json|chrome]
 *             [--dry-run] [--no-follow] -- PROG [ARGS]
 *
 * Parses the fprobe-event definitions here, against PROG's symbols and
 * DWARF, and hands their fetch programs to the preloaded library through
 * a shared memory file (lib/events/record.c).  The traced threads copy raw
 * records into per-thread rings in that memory; this process drains them
 * while PROG runs and formats them (lib/events/format.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include <fhook/events.h>

#include "cli.h"
#include "../lib/events/ev.h"

static volatile int trace_done, print_done;
static bool trace_status;	/* a status line on the terminal */

/*
 * Copy records out of the rings as fast as they come, so that a busy
 * program loses nothing while the printer below formats; with the trace
 * going to a file and stderr on a terminal, keep a status line there.
 */
static void *drain_thread(void *arg)
{
	struct fhook_trace *t = arg;
	struct timespec last = { 0 }, now;

	pthread_setname_np(pthread_self(), "fhook-drain");
	while (!trace_done) {
		if (fhook_trace_drain(t) <= 0)
			usleep(1000);
		if (!trace_status)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec != last.tv_sec) {
			fhook_trace_status(t, stderr);
			last = now;
		}
	}
	if (trace_status)
		fprintf(stderr, "\r\033[K");
	return NULL;
}

static void *print_thread(void *arg)
{
	struct fhook_trace *t = arg;

	pthread_setname_np(pthread_self(), "fhook-print");
	/* on a busy machine the copying must win over the formatting */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
	while (!print_done)
		fhook_trace_print(t, true);
	return NULL;
}

static int trace_run(struct fhook_event *evs, int nr_evs, struct fhook_event_prog *prog,
		     char **callers, int nr_callers, const char *out, const char *format,
		     bool follow, char **prog_argv)
{
	struct fhook_trace *t;
	pthread_t th, pth;
	FILE *f = stderr;
	int status;

	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "fhook: trace: %s: %s\n", out, strerror(errno));
		return 1;
	}
	t = fhook_trace_new(evs, nr_evs, prog, callers, nr_callers, follow, format, f);
	if (!t) {
		fprintf(stderr, "fhook: trace: cannot create the trace buffer: %s\n", strerror(errno));
		if (out)
			fclose(f);
		return 1;
	}
	trace_done = print_done = 0;
	trace_status = out && isatty(STDERR_FILENO);
	pthread_create(&th, NULL, drain_thread, t);
	pthread_create(&pth, NULL, print_thread, t);
	status = cli_run_preloaded(prog_argv, true);
	trace_done = 1;
	pthread_join(th, NULL);
	print_done = 1;
	pthread_join(pth, NULL);
	fhook_trace_finish(t, stderr);
	fhook_trace_free(t);
	if (out)
		fclose(f);
	return status;
}

static void trace_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook trace -e SPEC... [--caller SYM]... [-o FILE]\n"
		"                   [--format text|json|chrome] [--dry-run] [--no-follow]\n"
		"                   -- PROG [ARGS]\n"
		"\n"
		"Trace fprobe events in PROG, defined with the kernel's dynamic_events syntax:\n"
		"  f[MAXACTIVE][:[GRP/][EVENT]] SYM[%%return] [FETCHARGS]\n"
		"  -:[GRP/]EVENT\n"
		"FETCHARGS: $argN $arg* $retval $stackN $stack $comm @ADDR @SYM[+|-offs]\n"
		"  +|-[u]OFFS(FETCHARG) \\IMM \\\"STRING\" NAME=FETCHARG FETCHARG:TYPE, and\n"
		"  parameter names and fields (file->f_path.dentry) where PROG has DWARF.\n"
		"TYPE: u8/16/32/64 s8/16/32/64 x8/16/32/64 char string ustring symbol symstr\n"
		"  TYPE[N] b<bits>@<offs>/<size>\n"
		"\n"
		"  -e, --event SPEC     an event definition (repeatable); SYM may be a glob\n"
		"  --caller SYM         record only calls made from SYM (repeatable)\n"
		"  -o, --output FILE    write the trace to FILE (default: stderr)\n"
		"  --format FMT         text (the kernel's trace format), json (one object\n"
		"                       per line) or chrome (trace-event JSON for Perfetto)\n"
		"  --dry-run            print the definitions as dynamic_events shows them\n"
		"                       and exit, without running PROG\n"
		"  --no-follow          do not trace the processes PROG starts\n"
		"\n"
		"Exit status: PROG's; 1 for a bad definition; 2 for bad usage.\n");
}

int cmd_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "caller", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-follow", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char **specs = NULL, **callers = NULL, **libs = NULL, *out = NULL;
	const char *format = "text";
	struct fhook_event *evs = NULL;
	struct fhook_event_prog *prog = NULL, *resolve;
	int nr_specs = 0, nr_callers = 0, nr_libs = 0, nr_evs = 0, c, i, j, ret = 1;
	bool dry_run = false, follow = true;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+he:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			specs = realloc(specs, (nr_specs + 1) * sizeof(*specs));
			specs[nr_specs++] = optarg;
			break;
		case 'c':
			callers = realloc(callers, (nr_callers + 1) * sizeof(*callers));
			callers[nr_callers++] = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'n':
			dry_run = true;
			break;
		case 'F':
			follow = false;
			break;
		case 'h':
			trace_usage(stdout);
			return 0;
		default:
			trace_usage(stderr);
			return 2;
		}
	}
	if (!nr_specs || optind >= argc) {
		fprintf(stderr, "fhook: trace: %s\n",
			!nr_specs ? "at least one -e SPEC is required" : "no program after --");
		trace_usage(stderr);
		free(specs);
		free(callers);
		return 2;
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "chrome")) {
		fprintf(stderr, "fhook: trace: unknown format '%s' (text, json or chrome)\n", format);
		return 2;
	}

	/* resolve against the program as the loader would load it */
	{
		char **paths;
		int nr;
		char *path = argv[optind];
		char *found = NULL;

		if (!strchr(path, '/')) {
			/* as execvp() would find it */
			found = cli_which(path);
			if (found)
				path = found;
		}
		if (cli_program_objects(path, &paths, &nr)) {
			free(found);
			goto out;
		}
		libs = paths + 1;
		nr_libs = nr - 1;
		prog = fhook_event_prog_open(paths[0], libs, nr_libs);
		if (!prog) {
			fprintf(stderr, "fhook: trace: %s: %s\n", paths[0], strerror(errno));
			free(found);
			goto out;
		}
		free(found);
		libs = paths;
		nr_libs = nr;
	}

	evs = calloc(nr_specs, sizeof(*evs));
	if (!evs)
		goto out;
	/*
	 * A harness (make, sh, a test driver) has no traceable function of
	 * its own; the functions are in the programs it starts.  Then the
	 * definitions are checked for syntax only, and each traced process
	 * resolves them against what it loads.
	 */
	resolve = prog;
	if (follow && ev_prog_match_glob(prog, "*") <= 0 && !dry_run) {
		fprintf(stderr, "fhook: trace: %s has no patchable sites: events are resolved "
			"in the processes it starts\n", argv[optind]);
		resolve = NULL;
	}
	for (i = 0; i < nr_specs; i++) {
		struct fhook_event_error err;
		struct fhook_event ev;
		int r = fhook_event_parse(specs[i], resolve, &ev, &err);

		if (r) {
			fhook_event_print_error(stderr, &err);
			goto out;
		}
		if (ev.is_remove) {
			for (j = 0; j < nr_evs; j++)
				if (!strcmp(evs[j].group, ev.group) && !strcmp(evs[j].event, ev.event))
					break;
			if (j == nr_evs) {
				fprintf(stderr, "fhook: error: No such event to remove\n"
					"  Command: %s\n", specs[i]);
				fhook_event_free(&ev);
				goto out;
			}
			fhook_event_free(&evs[j]);
			memmove(&evs[j], &evs[j + 1], (nr_evs - j - 1) * sizeof(*evs));
			nr_evs--;
			continue;
		}
		for (j = 0; j < nr_evs; j++) {
			if (!strcmp(evs[j].group, ev.group) && !strcmp(evs[j].event, ev.event)) {
				/* the kernel's EVENT_EXIST, logged at the event name */
				fprintf(stderr, "fhook: error: Given group/event name is already "
					"used by another event\n  Command: %s\n", specs[i]);
				fhook_event_free(&ev);
				goto out;
			}
		}
		evs[nr_evs++] = ev;
	}
	if (dry_run) {
		char line[8192];

		for (i = 0; i < nr_evs; i++) {
			fhook_event_snprint(line, sizeof(line), &evs[i]);
			printf("%s\n", line);
		}
		ret = 0;
		goto out;
	}
	if (!nr_evs) {
		fprintf(stderr, "fhook: trace: no events left to trace\n");
		ret = 2;
		goto out;
	}
	ret = trace_run(evs, nr_evs, prog, callers, nr_callers, out, format, follow,
			argv + optind);
out:
	for (i = 0; i < nr_evs; i++)
		fhook_event_free(&evs[i]);
	free(evs);
	fhook_event_prog_close(prog);
	for (i = 0; i < nr_libs; i++)
		free(libs[i]);
	free(libs);
	free(specs);
	free(callers);
	return ret;
}
