/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `fhook record` and `fhook trace` share: their options, the event
 * definitions resolved against the program, and the run that records
 * while the program runs.
 */
#ifndef FHOOK_CLI_EVCLI_H
#define FHOOK_CLI_EVCLI_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <fhook/internal/events.h>

#include "../lib/events/session.h"

struct cli_ev {
	const char *cmd;		/* "record" or "trace" */
	char **specs;
	int nr_specs;
	char **spec_mem;		/* the definitions the command wrote itself */
	int nr_spec_mem;
	bool default_specs;		/* no -e: every function */
	char **callers;
	int nr_callers;
	const char *out;
	const char *format;
	bool follow, lossy, dry_run;
	bool buffered;			/* --page-cache: the recording's writes are not direct */
	int clock;			/* EV_CLOCK_*, -1: the best this machine trusts */
	uint64_t ring_size;
	bool flight;			/* --flight-recorder: rings read at a trigger and at the end */
	int trigger_sig;		/* --trigger signal:SIG (flight recorder; default SIGUSR2) */
	char *trigger_func;		/* --trigger FUNC>DURATION */
	uint64_t trigger_ns;
	const char *trigger_spec;	/* --trigger 'EVENT if FILTER' */
	int trigger_event;		/* its event, an index of evs */
	struct ev_filter_tok trigger_filter[EV_FILTER_MAX];
	int nr_trigger_filter;
	uint32_t trigger_count;		/* ...:N, the dumps it may fire; 0: no limit */
	char **argv;			/* the program and its arguments */
	pid_t pid;			/* -p: the running process instead */
	double duration;		/* --duration: seconds; 0: until Ctrl-C or its exit */
	int target_fd;			/* -p: the process's descriptor of the memory */
	/* resolved */
	struct fhook_event *evs;
	int nr_evs;
	struct fhook_event_prog *prog;
	char **libs;
	int nr_libs;
	bool no_sites;			/* the program itself has no patchable site */
	bool started;			/* a recording ran: there is a summary to say */
	bool stripped;			/* nor, without -e, a function symbol */
	char *untraced;			/* after the run: who ran untraced, and why */
};

/*
 * Parse the shared options (the command's own, if any, through @extra:
 * called for an option code it knows, returning 0, or -1 for unknown).
 * Returns 0, or an exit status (2: usage).
 */
int cli_ev_parse(struct cli_ev *c, int argc, char **argv, void (*usage)(FILE *));

/*
 * A kprobe glob's functions that fhook runs itself, left out: said once
 * (@n functions of file @file matched, @skipped of them left out).
 */
void cli_ev_say_left_out(const struct cli_ev *c, const char *mod, const char *glob, int file,
			 int skipped, int n);
/* A kprobe's C++ name named several functions: which, by their written forms. */
void cli_ev_say_overloads(struct cli_ev *c, const char *spec);
/* Each glob with $arg* made one definition per function (evglob.c): 0 or 1. */
int cli_ev_glob_args(struct cli_ev *c);

/* Parse and resolve the event definitions.  Returns 0 or an exit status. */
int cli_ev_resolve(struct cli_ev *c);

/*
 * Run the program while a session moves its records to @sink.  Fills
 * @end with the summary.  Returns the program's exit status; *failed is
 * set when the recording failed (the message is printed).
 */
int cli_ev_run(struct cli_ev *c, struct ev_sink *sink, struct rf_end *end, bool *failed);

/* After the summary line: the processes that ran untraced (or partly), and why. */
void cli_ev_print_untraced(struct cli_ev *c);

void cli_ev_free(struct cli_ev *c);

/* -p PID (cli/attach_ev.c): the program's name for messages, and the run */
int cli_ev_attach_name(struct cli_ev *c);
/* Attach, and have the process make the memory (@so->fd); 0 or an exit status. */
int cli_ev_attach_begin(struct cli_ev *c, struct ev_session_opts *so);
/* The session could not be made: let the process go. */
void cli_ev_attach_abort(struct cli_ev *c);
/*
 * Start recording in the process, let it go, and wait for a stop signal,
 * --duration or its exit; then remove every probe.  Returns the exit status.
 */
int cli_ev_attach_wait(struct cli_ev *c, volatile sig_atomic_t *stop_sig);

#endif
