// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook record [-e SPEC]... [--caller SYM]... [-o PATH] [--lossy] [--clock mono|tsc]
 *              [--buffer-size N] [--no-follow] [--dry-run] -- PROG [ARGS]
 * fhook record -p PID [--duration SECS] [-e SPEC]... [-o PATH] [...]
 *
 * Record fprobe events (every function's entry and exit without -e) into
 * a binary recording: the traced threads write fixed-size records into
 * their rings, and this process moves the ring bytes to the file as they
 * are, without decoding them.  `fhook replay` and `fhook report` read it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "evcli.h"
#include "rec_file.h"

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook record [-e SPEC]... [--caller SYM]... [-o PATH] [--lossy]\n"
		"                    [--clock mono|tsc] [--buffer-size N] [--no-follow]\n"
		"                    [--page-cache]\n"
		"                    [--flight-recorder[=MB] [--trigger TRIGGER]]\n"
		"                    [--dry-run] -- PROG [ARGS]\n"
		"       fhook record -p PID [--duration SECS] [-e SPEC]... [-o PATH] [...]\n"
		"\n"
		"Record fprobe events in PROG (and the programs it starts), or in the running\n"
		"process PID, into a binary recording; without -e, the entry and exit of every\n"
		"traceable function.\n"
		"SPEC is the kernel's dynamic_events syntax, as for `fhook trace`: 'f'\n"
		"events on fhook sites, 'p' and 'r' (kprobe) events on any code.\n"
		"\n"
		"  -e, --event SPEC     an event definition (repeatable); SYM may be a glob\n"
		"  --caller SYM         record only calls made from SYM (repeatable)\n"
		"  -o, --output PATH    the recording (default: fhook.rec); -: standard output,\n"
		"                       and PROG's own output goes to standard error\n"
		"  --lossy              drop records when a buffer is full (counted) instead\n"
		"                       of making the thread wait for this process\n"
		"  --clock mono|tsc     the clock of the records (default: the TSC where the\n"
		"                       kernel keeps time with it, else CLOCK_MONOTONIC)\n"
		"  --buffer-size N      bytes of buffer per thread (default 2M)\n"
		"  --no-follow          do not record the processes PROG starts\n"
		"  --page-cache         write the recording through the page cache (default:\n"
		"                       direct I/O where the file system allows it)\n"
		"  --dry-run            print the definitions as dynamic_events shows them\n"
		"                       and exit, without running PROG\n"
		"  -p, --pid PID        record the running process PID instead of starting\n"
		"                       PROG: attach, record until Ctrl-C, --duration or its\n"
		"                       exit, then remove every probe (the processes it\n"
		"                       starts are not recorded)\n"
		"  --duration SECS      with -p: stop after SECS seconds (a decimal number)\n"
		"  --flight-recorder[=MB]  keep the last MB (default 2) of each thread's events\n"
		"                       in memory, write nothing while PROG runs, and write them\n"
		"                       when the trigger fires and at the end (exit, crash, -p's\n"
		"                       detach)\n"
		"  --trigger signal:SIG the flight recorder's trigger: SIG sent to fhook\n"
		"                       (default signal:USR2; USR1, QUIT, PROF or a number)\n"
		"  --trigger FUNC>DURATION  also: a call of FUNC (a function with a site) that\n"
		"                       took DURATION or longer (ns, us, ms, s: 'handle>5ms'),\n"
		"                       decided at its return\n"
		"  --trigger 'EVENT if FILTER'  or: EVENT (an -e event) recorded with fields\n"
		"                       that match FILTER, the kernel's event filter\n"
		"                       ('req if path ~ \"*.so\" && size > 4096')\n"
		"                       FUNC>DURATION:N, 'EVENT:N if FILTER': N dumps at most\n"
		"\n"
		"Then: fhook replay PATH (text, json, chrome, graph, perfetto),\n"
		"fhook report PATH (time per function) and fhook info PATH (what it is).\n"
		"Exit status: PROG's; 1 when the recording failed or a definition is bad;\n"
		"2 for bad usage.\n");
}

/* -o must not be the program being recorded. */
static int check_output(const char *path, const char *prog)
{
	char *exe = cli_which(prog);
	struct stat a, b;

	if (exe && !stat(exe, &a) && !stat(path, &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		fprintf(stderr, "fhook: record: -o %s is the program being recorded\n", path);
		free(exe);
		return -EEXIST;
	}
	free(exe);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct cli_ev c = { .cmd = "record" };
	struct rec_file fs;
	const char *path = NULL;
	int fd = -1, err;
	struct rf_end end = { 0 };
	bool failed;
	int ret;

	ret = cli_ev_parse(&c, argc, argv, record_usage);
	if (ret) {
		cli_ev_free(&c);
		return ret < 0 ? 0 : ret;
	}
	if (c.format) {
		fprintf(stderr, "fhook: record: --format is for fhook replay\n");
		cli_ev_free(&c);
		return 2;
	}
	if (!c.out)
		c.out = "fhook.rec";
	ret = cli_ev_resolve(&c);
	if (ret) {
		cli_ev_free(&c);
		return ret < 0 ? 0 : ret;
	}
	if (!strcmp(c.out, "-")) {
		/*
		 * The recording is all that goes to standard output: PROG's
		 * own output goes to standard error instead, as fhook's does.
		 */
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
		if (fd >= 0 && !c.pid)
			dup2(STDERR_FILENO, STDOUT_FILENO);
	}
	else if (!check_output(c.out, c.argv[0]))
		path = c.out;
	if (fd < 0 && !path) {
		cli_ev_free(&c);
		return 1;
	}
	/*
	 * A stream of records goes by direct I/O; a flight recorder's dumps
	 * are rare, and readers look at each one as soon as it is said.
	 */
	rec_file_init(&fs, path, fd, !c.flight && !c.buffered);
	ret = cli_ev_run(&c, &fs.s, &end, &failed);
	if ((err = rec_file_close(&fs)) && !failed) {
		fprintf(stderr, "fhook: record: %s: %s\n", c.out, strerror(-err));
		failed = true;
	}
	if (!failed)
		fprintf(stderr, "fhook: record: %llu events, %llu nmissed, %llu lost, %llu waits; "
			"%.1f MB in %s\n", (unsigned long long)end.events,
			(unsigned long long)end.nmissed, (unsigned long long)end.lost,
			(unsigned long long)end.waits, fs.bytes / 1e6, c.out);
	cli_ev_print_untraced(&c);
	cli_ev_free(&c);
	return failed ? 1 : ret;
}
