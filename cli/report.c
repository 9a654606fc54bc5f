// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook report [-s KEY] [-F GLOB]... [--depth N] [--min-time DUR] [--tid TID]
 *              [--since SEC] [--until SEC] [PATH]
 *
 * Time per function from a recording of entries and exits: calls, total
 * time, self time (less the time of the calls it made), min/avg/max per
 * call, sorted.  A function recorded in several processes of the same
 * program counts as one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../lib/events/array.h"
#include "../lib/events/decode.h"

struct fn_stat {
	const char *name;	/* the symbol's name, or the address as text */
	char *own;		/* @name's storage when it is an address */
	uint64_t calls, total, self, min, max;
	struct fn_stat *next;	/* hash chain */
};

struct frame {
	uint64_t ip, start, child;
	struct fn_stat *fn;
};

struct rthr {
	struct frame *st;
	size_t cap;
};

enum { SORT_TOTAL, SORT_SELF, SORT_CALLS, SORT_AVG, SORT_MIN, SORT_MAX, SORT_NAME };

struct report {
	struct dec *d;
	struct fn_stat **tab;	/* by name pointer; same-named ones merged when printed */
	size_t tab_size, nr;
	struct rthr *thr;	/* by thread number */
	size_t nr_thr;
	char **globs;
	int nr_globs;
	uint32_t max_depth;
	uint64_t min_time;
	long tid;
	uint64_t since, until, t0;
	bool have_t0;
	uint64_t events, unpaired;
};

static struct fn_stat *fn_get(struct report *r, const struct dec_thread *thr, uint64_t ip)
{
	struct dec_sym s;
	const char *name;
	char buf[32];
	size_t h;
	struct fn_stat *f;

	if (dec_symbolize(r->d, thr, ip, &s)) {
		name = s.name;
	} else {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
		name = NULL;
	}
	h = ((uintptr_t)(name ? (const void *)name : (const void *)(uintptr_t)ip) >> 3) *
	    0x9e3779b97f4a7c15ULL % r->tab_size;
	for (f = r->tab[h]; f; f = f->next)
		if (name ? f->name == name : (f->own && !strcmp(f->own, buf)))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (!name) {
		f->own = strdup(buf);
		name = f->own;
	}
	f->name = name;
	f->min = UINT64_MAX;
	f->next = r->tab[h];
	r->tab[h] = f;
	r->nr++;
	return f;
}

static bool wanted(struct report *r, const struct fn_stat *f, uint32_t depth)
{
	int i;

	if (r->max_depth && depth >= r->max_depth)
		return false;
	if (!r->nr_globs)
		return true;
	for (i = 0; i < r->nr_globs; i++)
		if (!fnmatch(r->globs[i], f->name, 0))
			return true;
	return false;
}

static int on_event(void *arg, const struct dec_event *ev)
{
	struct report *r = arg;
	const struct dec_thread *thr = ev->thr;
	struct rthr *t;
	uint64_t rel;

	if (!r->have_t0) {
		r->t0 = ev->ts;
		r->have_t0 = true;
	}
	rel = ev->ts - r->t0;
	if ((r->tid >= 0 && thr->tid != (uint32_t)r->tid) || rel < r->since || rel > r->until)
		return 0;
	r->events++;
	if (!ev->def->is_slice) {
		/* an entry (or exit) alone: count it, no time */
		struct fn_stat *f;

		if (ev->def->is_return)
			return 0;
		f = fn_get(r, thr, ev->ip);
		if (f && wanted(r, f, ev->depth))
			f->calls++;
		return 0;
	}
	if (ev_array_fit(&r->thr, &r->nr_thr, thr->num, sizeof(*r->thr)))
		return -ENOMEM;
	t = &r->thr[thr->num];
	if (ev_array_fit(&t->st, &t->cap, ev->depth, sizeof(*t->st)))
		return -ENOMEM;
	if (!ev->def->is_return) {
		struct frame *fr = &t->st[ev->depth];

		fr->ip = ev->ip;
		fr->start = ev->ts;
		fr->child = 0;
		fr->fn = fn_get(r, thr, ev->ip);
	} else {
		struct frame *fr = &t->st[ev->depth];
		uint64_t dur;
		struct fn_stat *f;

		if (!fr->fn || (ev->ip && fr->ip != ev->ip) || ev->ts < fr->start) {
			r->unpaired++;
			return 0;
		}
		f = fr->fn;
		dur = ev->ts - fr->start;
		if (ev->depth)
			t->st[ev->depth - 1].child += dur;
		fr->fn = NULL;
		if (dur < r->min_time || !wanted(r, f, ev->depth))
			return 0;
		f->calls++;
		f->total += dur;
		f->self += dur > fr->child ? dur - fr->child : 0;
		if (dur < f->min)
			f->min = dur;
		if (dur > f->max)
			f->max = dur;
	}
	return 0;
}

static int sort_key;

static int cmp_stat(const void *a, const void *b)
{
	const struct fn_stat *x = *(const struct fn_stat *const *)a;
	const struct fn_stat *y = *(const struct fn_stat *const *)b;
	uint64_t vx, vy;

	switch (sort_key) {
	case SORT_SELF: vx = x->self; vy = y->self; break;
	case SORT_CALLS: vx = x->calls; vy = y->calls; break;
	case SORT_AVG:
		vx = x->calls ? x->total / x->calls : 0;
		vy = y->calls ? y->total / y->calls : 0;
		break;
	case SORT_MIN: vx = x->min; vy = y->min; break;
	case SORT_MAX: vx = x->max; vy = y->max; break;
	case SORT_NAME: return strcmp(x->name, y->name);
	default: vx = x->total; vy = y->total; break;
	}
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A duration as uftrace prints it: three decimals and a unit. */
static void fmt_dur(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.3f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f  s", ns / 1e9);
}

static bool parse_dur(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return false;
	if (!*end || !strcmp(end, "ns"))
		*out = (uint64_t)v;
	else if (!strcmp(end, "us"))
		*out = (uint64_t)(v * 1e3);
	else if (!strcmp(end, "ms"))
		*out = (uint64_t)(v * 1e6);
	else if (!strcmp(end, "s"))
		*out = (uint64_t)(v * 1e9);
	else
		return false;
	return true;
}

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook report [-s KEY] [-F GLOB]... [--depth N] [--min-time DUR]\n"
		"                    [--tid TID] [--since DUR] [--until DUR] [PATH]\n"
		"\n"
		"Time per function in a recording of entries and exits (default: fhook.rec):\n"
		"calls, total time, self time (less the calls it made), and min/avg/max.\n"
		"\n"
		"  -s, --sort KEY       total (default), self, calls, avg, min, max or name\n"
		"  -F, --filter GLOB    only functions matching GLOB (repeatable)\n"
		"  --depth N            only calls less than N deep\n"
		"  --min-time DUR       only calls that took at least DUR (e.g. 10us, 2ms)\n"
		"  --tid TID            only the thread TID\n"
		"  --since DUR, --until DUR   only events in that window, counted from the\n"
		"                       recording's first event\n"
		"\n"
		"Exit status: 0; 1 when the recording cannot be read; 2 for bad usage.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "filter", required_argument, NULL, 'F' },
		{ "depth", required_argument, NULL, 'd' },
		{ "min-time", required_argument, NULL, 'm' },
		{ "tid", required_argument, NULL, 't' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = { "total", "self", "calls", "avg", "min", "max", "name" };
	struct report r = { .tid = -1, .until = UINT64_MAX };
	const char *path = "fhook.rec";
	struct fn_stat **all = NULL, *f;
	size_t i, n = 0, k;
	int c, ret = 1, want_sort;
	char *end;

	sort_key = SORT_TOTAL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hs:F:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (!strcmp(optarg, keys[k]))
					break;
			if (k == sizeof(keys) / sizeof(keys[0])) {
				fprintf(stderr, "fhook: report: unknown sort key '%s'\n", optarg);
				return 2;
			}
			sort_key = (int)k;
			break;
		case 'F':
			r.globs = realloc(r.globs, (r.nr_globs + 1) * sizeof(*r.globs));
			r.globs[r.nr_globs++] = optarg;
			break;
		case 'd':
			r.max_depth = strtoul(optarg, &end, 10);
			if (*end || !r.max_depth) {
				fprintf(stderr, "fhook: report: --depth %s: a positive number\n", optarg);
				return 2;
			}
			break;
		case 'm':
		case 'S':
		case 'U': {
			uint64_t v;

			if (!parse_dur(optarg, &v)) {
				fprintf(stderr, "fhook: report: '%s' is not a duration (e.g. 500us, "
					"2ms, 1.5s)\n", optarg);
				return 2;
			}
			if (c == 'm')
				r.min_time = v;
			else if (c == 'S')
				r.since = v;
			else
				r.until = v;
			break;
		}
		case 't':
			r.tid = strtol(optarg, &end, 10);
			if (*end || r.tid < 0) {
				fprintf(stderr, "fhook: report: --tid %s: a thread id\n", optarg);
				return 2;
			}
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		report_usage(stderr);
		return 2;
	}
	want_sort = sort_key;
	r.d = cli_open_recording("report", path);
	if (!r.d)
		return 1;
	r.tab_size = 1 << 16;
	r.tab = calloc(r.tab_size, sizeof(*r.tab));
	if (!r.tab || dec_flush(r.d, on_event, &r)) {
		fprintf(stderr, "fhook: report: out of memory\n");
		goto out;
	}
	cli_recording_warnings("report", r.d);
	all = calloc(r.nr ? r.nr : 1, sizeof(*all));
	if (!all)
		goto out;
	for (i = 0; i < r.tab_size; i++)
		for (f = r.tab[i]; f; f = f->next)
			if (f->calls)
				all[n++] = f;
	/* the same function in several files or processes: one line */
	sort_key = SORT_NAME;
	qsort(all, n, sizeof(*all), cmp_stat);
	for (i = 0, k = 0; i < n; i++) {
		if (k && !strcmp(all[k - 1]->name, all[i]->name)) {
			struct fn_stat *a = all[k - 1], *b = all[i];

			a->calls += b->calls;
			a->total += b->total;
			a->self += b->self;
			if (b->min < a->min)
				a->min = b->min;
			if (b->max > a->max)
				a->max = b->max;
			continue;
		}
		all[k++] = all[i];
	}
	n = k;
	sort_key = want_sort;
	qsort(all, n, sizeof(*all), cmp_stat);
	printf("  %12s  %12s  %10s  %12s  %12s  %12s  %s\n", "Total time", "Self time", "Calls",
	       "Avg", "Min", "Max", "Function");
	printf("  %12s  %12s  %10s  %12s  %12s  %12s  %s\n", "==========", "=========",
	       "=====", "===", "===", "===", "========");
	for (i = 0; i < n; i++) {
		char t[32], s[32], a[32], mi[32], ma[32];

		f = all[i];
		if (f->total || f->max) {
			fmt_dur(t, sizeof(t), f->total);
			fmt_dur(s, sizeof(s), f->self);
			fmt_dur(a, sizeof(a), f->total / f->calls);
			fmt_dur(mi, sizeof(mi), f->min);
			fmt_dur(ma, sizeof(ma), f->max);
		} else {
			strcpy(t, "-");
			strcpy(s, "-");
			strcpy(a, "-");
			strcpy(mi, "-");
			strcpy(ma, "-");
		}
		printf("  %12s  %12s  %10llu  %12s  %12s  %12s  %s\n", t, s,
		       (unsigned long long)f->calls, a, mi, ma, f->name);
	}
	if (r.unpaired)
		fprintf(stderr, "fhook: report: %llu exits had no entry to pair with\n",
			(unsigned long long)r.unpaired);
	ret = fflush(stdout) ? 1 : 0;
out:
	if (r.tab) {
		for (i = 0; i < r.tab_size; i++) {
			while ((f = r.tab[i])) {
				r.tab[i] = f->next;
				free(f->own);
				free(f);
			}
		}
	}
	for (i = 0; i < r.nr_thr; i++)
		free(r.thr[i].st);
	free(r.thr);
	free(r.tab);
	free(all);
	free(r.globs);
	dec_free(r.d);
	return ret;
}
