/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The options every reader of a recording takes (report, replay, and
 * report's views): the filter set of lib/events/calls.h and the form of
 * C++ names.  One parser, one help text, so that they cannot drift apart.
 */
#ifndef FHOOK_CLI_VIEW_H
#define FHOOK_CLI_VIEW_H

#include <getopt.h>
#include <stdio.h>

#include "../lib/events/calls.h"

struct cli_view {
	struct call_filter flt;
	int demangle;		/* enum dec_demangle */
};

enum {
	VIEW_OPT_TID = 0x1000,
	VIEW_OPT_RANGE,
	VIEW_OPT_DEMANGLE,
};

#define CLI_VIEW_SHORTOPTS	"F:N:D:t:r:"
#define CLI_VIEW_LONGOPTS						\
	{ "filter", required_argument, NULL, 'F' },			\
	{ "notrace", required_argument, NULL, 'N' },			\
	{ "hide", required_argument, NULL, 'N' },			\
	{ "depth", required_argument, NULL, 'D' },			\
	{ "time-filter", required_argument, NULL, 't' },		\
	{ "min-time", required_argument, NULL, 't' },			\
	{ "tid", required_argument, NULL, VIEW_OPT_TID },		\
	{ "time-range", required_argument, NULL, 'r' },		\
	{ "demangle", required_argument, NULL, VIEW_OPT_DEMANGLE }

void cli_view_init(struct cli_view *v);
void cli_view_fini(struct cli_view *v);
/* Option @c of getopt_long: 1 taken, 0 not a view option, -1 bad (said on stderr). */
int cli_view_opt(struct cli_view *v, const char *cmd, int c, const char *arg);
/* The options' lines of a usage text. */
void cli_view_usage(FILE *f);
/* Apply the name form to a decoder. */
void cli_view_apply(const struct cli_view *v, struct dec *d);

#endif
