// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The options of every reader of a recording (cli/view.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "view.h"

void cli_view_init(struct cli_view *v)
{
	memset(v, 0, sizeof(*v));
	v->demangle = DEC_DEMANGLE_SHORT;
}

void cli_view_fini(struct cli_view *v)
{
	free(v->flt.only);
	free(v->flt.hide);
	free(v->flt.tids);
}

static int add_glob(const char ***list, int *nr, const char *arg)
{
	const char **nl = realloc(*list, (*nr + 1) * sizeof(*nl));

	if (!nl)
		return -1;
	*list = nl;
	nl[(*nr)++] = arg;
	return 1;
}

int cli_view_opt(struct cli_view *v, const char *cmd, int c, const char *arg)
{
	struct call_filter *flt = &v->flt;
	char *end;

	switch (c) {
	case 'F':
		return add_glob(&flt->only, &flt->nr_only, arg);
	case 'N':
		return add_glob(&flt->hide, &flt->nr_hide, arg);
	case 'D': {
		unsigned long n = strtoul(arg, &end, 10);

		if (*end || !n || n > 1000000) {
			fprintf(stderr, "fhook: %s: --depth %s: a positive number\n", cmd, arg);
			return -1;
		}
		flt->max_depth = (uint32_t)n;
		return 1;
	}
	case 't':
		if (!calls_parse_duration(arg, &flt->min_time)) {
			fprintf(stderr, "fhook: %s: '%s' is not a duration (e.g. 500ns, 20us, 2ms, "
				"1.5s)\n", cmd, arg);
			return -1;
		}
		return 1;
	case VIEW_OPT_TID:
		if (!calls_parse_tids(flt, arg)) {
			fprintf(stderr, "fhook: %s: --tid %s: thread ids separated by commas\n",
				cmd, arg);
			return -1;
		}
		return 1;
	case 'r':
		if (!calls_parse_range(flt, arg)) {
			fprintf(stderr, "fhook: %s: --time-range %s: START~END, each a time as "
				"replay prints it (1234.5678) or a duration from the first event "
				"(10ms); either may be left out\n", cmd, arg);
			return -1;
		}
		return 1;
	case VIEW_OPT_DEMANGLE:
		if (!strcmp(arg, "short") || !strcmp(arg, "simple"))
			v->demangle = DEC_DEMANGLE_SHORT;
		else if (!strcmp(arg, "full"))
			v->demangle = DEC_DEMANGLE_FULL;
		else if (!strcmp(arg, "no"))
			v->demangle = DEC_DEMANGLE_NO;
		else {
			fprintf(stderr, "fhook: %s: --demangle %s: short, full or no\n", cmd, arg);
			return -1;
		}
		return 1;
	}
	return 0;
}

void cli_view_usage(FILE *f)
{
	fprintf(f,
		"Filters (the same in every view; a hidden call's time is its caller's own):\n"
		"  -F, --filter FUNC    only FUNC and the calls under it (a glob; repeatable)\n"
		"  -N, --notrace FUNC   hide FUNC and the calls under it (--hide; repeatable)\n"
		"  -D, --depth N        only calls less than N deep (counted from an -F function)\n"
		"  -t, --time-filter TIME  hide calls shorter than TIME (500ns, 20us, 2ms, 1s;\n"
		"                       --min-time)\n"
		"  --tid TID[,TID...]   only these threads\n"
		"  -r, --time-range START~END  only calls that start in this window: times as\n"
		"                       replay prints them (1234.5678), or durations from the\n"
		"                       first event (10ms~1.5s); either end may be left out\n"
		"  --demangle MODE      C++ names: short (ns::Class::method, the default), full\n"
		"                       (with template arguments and parameters) or no (mangled)\n"
		"Globs match a C++ function by its qualified name, with or without template\n"
		"arguments, or by its mangled name; never by its return or parameter types.\n");
}

void cli_view_apply(const struct cli_view *v, struct dec *d)
{
	dec_set_demangle(d, v->demangle);
}
