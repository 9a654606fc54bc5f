/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `fhook record` and `fhook trace` share: their options, the event
 * definitions resolved against the program, and the run that records
 * while the program runs.
 */
#ifndef FHOOK_CLI_EVCLI_H
#define FHOOK_CLI_EVCLI_H

#include <stdbool.h>
#include <stdint.h>

#include <fhook/internal/events.h>

#include "../lib/events/session.h"

struct cli_ev {
	const char *cmd;		/* "record" or "trace" */
	char **specs;
	int nr_specs;
	char **callers;
	int nr_callers;
	const char *out;
	const char *format;
	bool follow, lossy, dry_run;
	int clock;			/* EV_CLOCK_*, -1: the best this machine trusts */
	uint64_t ring_size;
	char **argv;			/* the program and its arguments */
	/* resolved */
	struct fhook_event *evs;
	int nr_evs;
	struct fhook_event_prog *prog;
	char **libs;
	int nr_libs;
	bool no_sites;			/* the program itself has no patchable site */
	char *untraced;			/* after the run: who ran untraced, and why */
};

/*
 * Parse the shared options (the command's own, if any, through @extra:
 * called for an option code it knows, returning 0, or -1 for unknown).
 * Returns 0, or an exit status (2: usage).
 */
int cli_ev_parse(struct cli_ev *c, int argc, char **argv, void (*usage)(FILE *));

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

#endif
