// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook report [-s KEYS] [--by thread|process] [--format table|tree|folded]
 *              [FILTERS] [PATH]
 * fhook report --diff [-s KEYS] [FILTERS] BASE NEW
 *
 * What a recording's calls add up to (docs/report.md): per function the
 * calls, total time (a recursive function's outermost frame only), self
 * time (less the shown calls it made), min/avg/max of one call; the call
 * tree, each call path once; flame-graph stacks; two recordings side by
 * side.  Memory grows with the functions and call paths, never with the
 * events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "../lib/events/array.h"
#include "../lib/events/decode.h"

static const char *const key_names[KEY_NR] = {
	"total", "self", "calls", "avg", "min", "max", "name",
};

#define MAX_KEYS	8

static int sort_keys[MAX_KEYS] = { KEY_TOTAL };
static int nr_sort_keys = 1;
static bool sort_groups_first;	/* --by: one table per group, sorted within it */

/* ---- rows: one per function (and thread or process with --by) ---------- */

static struct rep_row *row_lookup(struct rep *r, const struct call *c);

/* row_get() of an address not in the cache */
static __attribute__((noinline)) struct rep_row *row_miss(struct rep *r, const struct call *c,
							  uint32_t group, size_t slot)
{
	struct rep_ipcache *e;

	if (!r->ipcache && !(r->ipcache = calloc(REP_IPCACHE, sizeof(*r->ipcache))))
		return row_lookup(r, c);
	e = &r->ipcache[slot];
	e->row = row_lookup(r, c);
	e->ip = c->ip;
	e->proc = c->thr->proc;
	e->group = group;
	return e->row;
}

/*
 * The row of @c: most calls are of an address met before, found in a
 * direct-mapped cache before any symbol or name lookup.
 */
static inline struct rep_row *row_get(struct rep *r, const struct call *c)
{
	uint32_t group = __builtin_expect(r->by == REP_BY_NONE, 1) ? 0 :
			 r->by == REP_BY_THREAD ? c->thr->num : c->thr->pid;
	size_t slot = ((c->ip >> 2) ^ (c->ip >> 15) ^ group * 0x9e37) & (REP_IPCACHE - 1);
	const struct rep_ipcache *e = r->ipcache ? &r->ipcache[slot] : NULL;

	if (__builtin_expect(e && e->row && e->ip == c->ip && e->proc == c->thr->proc &&
			     e->group == group, 1))
		return e->row;
	return row_miss(r, c, group, slot);
}

static struct rep_row *row_lookup(struct rep *r, const struct call *c)
{
	struct dec_sym s;
	const char *name;
	uint32_t group = 0;
	size_t h, mask;
	struct rep_row *row;
	char buf[32];

	if (r->by == REP_BY_THREAD)
		group = c->thr->num;
	else if (r->by == REP_BY_PROCESS)
		group = c->thr->pid;
	name = dec_symbolize(r->d, c->thr, c->ip, &s) ? s.name : NULL;
	if (r->nr_rows * 2 >= r->cap_rows) {
		size_t cap = r->cap_rows ? 2 * r->cap_rows : 4096, i;
		struct rep_row **nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (i = 0; i < r->cap_rows; i++) {
			if (!r->rows[i])
				continue;
			h = r->rows[i]->hash;
			while (nt[h & (cap - 1)])
				h++;
			nt[h & (cap - 1)] = r->rows[i];
		}
		free(r->rows);
		r->rows = nt;
		r->cap_rows = cap;
	}
	mask = r->cap_rows - 1;
	/* by the name's address: the same symbol of one file is one row already */
	h = (((uintptr_t)(name ? (uintptr_t)name : c->ip) >> 3) ^ group * 0x51ed27ULL) *
	    0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	for (; (row = r->rows[h & mask]); h++)
		if (row->group == group && (name ? row->name == name : !row->own && row->ip == c->ip))
			return row;
	row = calloc(1, sizeof(*row));
	if (!row)
		return NULL;
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)c->ip);
		row->own = strdup(buf);
		if (!row->own) {
			free(row);
			return NULL;
		}
		name = row->own;
	}
	row->name = name;
	row->ip = c->ip;
	row->group = group;
	row->hash = h;
	row->min = UINT64_MAX;
	row->pid = c->thr->pid;
	row->tid = c->thr->tid;
	memcpy(row->comm, c->thr->comm, sizeof(row->comm));
	r->rows[h & mask] = row;
	r->nr_rows++;
	return row;
}

/* How many frames of @row are open on @thr: recursion counts the outermost once. */
static uint32_t *active_get(struct rep *r, const struct rep_row *row, uint32_t thr)
{
	size_t h, mask;

	if (r->nr_active * 2 >= r->cap_active) {
		size_t cap = r->cap_active ? 2 * r->cap_active : 4096, i;
		struct rep_active *na = calloc(cap, sizeof(*na));

		if (!na)
			return NULL;
		for (i = 0; i < r->cap_active; i++) {
			if (!r->active[i].row)
				continue;
			h = r->active[i].hash;
			while (na[h & (cap - 1)].row)
				h++;
			na[h & (cap - 1)] = r->active[i];
		}
		free(r->active);
		r->active = na;
		r->cap_active = cap;
	}
	mask = r->cap_active - 1;
	h = (((uintptr_t)row >> 4) ^ (uint64_t)thr * 0x9e3779b1ULL) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 31;
	for (; r->active[h & mask].row; h++)
		if (r->active[h & mask].row == row && r->active[h & mask].thr == thr)
			return &r->active[h & mask].count;
	r->active[h & mask].row = row;
	r->active[h & mask].thr = thr;
	r->active[h & mask].hash = h;
	r->nr_active++;
	return &r->active[h & mask].count;
}

/*
 * A call's row and the counter of its row's open frames on its thread are
 * kept in the call itself (priv[0], priv[1]) from its enter to its exit; a
 * call path's node in priv[0].
 */
static int rep_enter(void *ctx, struct call *c, const struct dec_event *ev)
{
	struct rep *r = ctx;

	if (r->rows_wanted) {
		struct rep_row *row = row_get(r, c);
		uint32_t thr = c->thr->num, *active;

		if (!row)
			return -ENOMEM;
		/*
		 * The row's own counter serves one thread at a time: a thread
		 * takes it when it is free and the thread has no frames of the
		 * row counted elsewhere.
		 */
		if (row->act_n && row->act_thr == thr) {
			active = &row->act_n;
		} else if (!row->act_n && (!r->nr_active || !*active_get(r, row, thr))) {
			row->act_thr = thr;
			active = &row->act_n;
		} else {
			active = active_get(r, row, thr);
			if (!active)
				return -ENOMEM;
		}
		++*active;
		c->priv[0] = row;
		c->priv[1] = active;
	} else {
		struct rep_node *node = rep_node_get(r, c->up ? c->up->priv[0] : NULL, c);

		if (!node)
			return -ENOMEM;
		c->priv[0] = node;
	}
	return 0;
}

static int rep_exit(void *ctx, struct call *c, const struct dec_event *ev)
{
	struct rep *r = ctx;
	uint64_t dur = c->end - c->start, self;

	if (!c->priv[0])
		return 0;	/* cannot be: every exit has had its enter */
	self = dur > c->child ? dur - c->child : 0;
	if (r->rows_wanted) {
		struct rep_row *row = c->priv[0];
		uint32_t *active = c->priv[1];

		--*active;
		if (!c->shown)
			return 0;
		row->calls++;
		row->sum += dur;
		row->self += self;
		if (!*active)
			row->total += dur;
		if (dur < row->min)
			row->min = dur;
		if (dur > row->max)
			row->max = dur;
		if (c->unfinished)
			row->unfinished++;
	} else {
		struct rep_node *node = c->priv[0];

		if (!c->shown)
			return 0;
		node->calls++;
		node->total += dur;
		node->self += self;
		if (c->unfinished)
			node->unfinished++;
	}
	return 0;
}

/* An entry event of no call (a probe without an exit event): a call with no time. */
static int rep_event(void *ctx, const struct dec_event *ev, uint32_t depth)
{
	struct rep *r = ctx;
	struct call c = { .thr = ev->thr, .ip = ev->ip };
	struct rep_row *row;

	if (ev->def->is_return || !r->rows_wanted)
		return 0;
	row = row_get(r, &c);
	if (!row)
		return -ENOMEM;
	row->calls++;
	row->untimed++;
	return 0;
}

static const struct call_view rep_view = {
	.enter = rep_enter,
	.exit = rep_exit,
	.event = rep_event,
};

void rep_free(struct rep *r)
{
	size_t i;

	for (i = 0; i < r->cap_rows; i++) {
		if (r->rows[i]) {
			free(r->rows[i]->own);
			free(r->rows[i]);
		}
	}
	free(r->rows);
	free(r->active);
	free(r->ipcache);
	rep_tree_free(r);
	dec_free(r->d);
	memset(r, 0, sizeof(*r));
}

/* Read the recording at @path into @r (rows and/or the tree, as @r asks). */
int rep_read(struct rep *r, const char *cmd, const char *path, const struct cli_view *view)
{
	struct calls *cs;
	int ret;

	r->d = cli_open_recording(cmd, path);
	if (!r->d)
		return 1;
	cli_view_apply(view, r->d);
	cs = calls_new(r->d, &view->flt, &rep_view, r);
	if (!cs) {
		fprintf(stderr, "fhook: %s: out of memory\n", cmd);
		return 1;
	}
	ret = dec_flush_ends(r->d, calls_event, calls_thread_end, cs);
	if (!ret)
		ret = calls_finish(cs);
	r->unpaired = calls_unpaired(cs);
	r->unfinished = calls_unfinished(cs);
	calls_free(cs);
	cli_recording_warnings(cmd, r->d);
	if (ret) {
		fprintf(stderr, "fhook: %s: %s\n", cmd, strerror(-ret));
		return 1;
	}
	return 0;
}

/* ---- the table ------------------------------------------------------------ */

uint64_t rep_key_value(const struct rep_row *x, int key)
{
	switch (key) {
	case KEY_SELF: return x->self;
	case KEY_CALLS: return x->calls;
	case KEY_AVG: return x->calls > x->untimed ? x->sum / (x->calls - x->untimed) : 0;
	case KEY_MIN: return x->min;
	case KEY_MAX: return x->max;
	default: return x->total;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct rep_row *x = *(const struct rep_row *const *)a;
	const struct rep_row *y = *(const struct rep_row *const *)b;
	int i, c;

	if (sort_groups_first && x->group != y->group)
		return x->group < y->group ? -1 : 1;
	for (i = 0; i < nr_sort_keys; i++) {
		uint64_t vx, vy;

		if (sort_keys[i] == KEY_NAME) {
			c = strcmp(x->name, y->name);
			if (c)
				return c;
			continue;
		}
		vx = rep_key_value(x, sort_keys[i]);
		vy = rep_key_value(y, sort_keys[i]);
		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_group_name(const void *a, const void *b)
{
	const struct rep_row *x = *(const struct rep_row *const *)a;
	const struct rep_row *y = *(const struct rep_row *const *)b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The rows with calls, the same function of several files or process
 * images merged into one (by name in its shown form), sorted; *@n rows.
 */
struct rep_row **rep_rows(struct rep *r, size_t *n)
{
	struct rep_row **all = calloc(r->nr_rows ? r->nr_rows : 1, sizeof(*all));
	size_t i, k = 0;

	*n = 0;
	if (!all)
		return NULL;
	for (i = 0; i < r->cap_rows; i++)
		if (r->rows[i] && r->rows[i]->calls)
			all[k++] = r->rows[i];
	qsort(all, k, sizeof(*all), cmp_group_name);
	for (i = 0, *n = 0; i < k; i++) {
		struct rep_row *a = *n ? all[*n - 1] : NULL, *b = all[i];

		if (a && a->group == b->group && !strcmp(a->name, b->name)) {
			a->calls += b->calls;
			a->total += b->total;
			a->self += b->self;
			a->sum += b->sum;
			a->unfinished += b->unfinished;
			a->untimed += b->untimed;
			if (b->min < a->min)
				a->min = b->min;
			if (b->max > a->max)
				a->max = b->max;
			continue;
		}
		all[(*n)++] = b;
	}
	sort_groups_first = r->by != REP_BY_NONE;
	qsort(all, *n, sizeof(*all), cmp_rows);
	return all;
}

/* A duration as uftrace prints it: three decimals and a unit. */
void rep_fmt_dur(char *buf, size_t size, uint64_t ns)
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

static void print_header(void)
{
	printf("  %12s  %12s  %10s  %12s  %12s  %12s  %s\n", "Total time", "Self time", "Calls",
	       "Avg", "Min", "Max", "Function");
	printf("  %12s  %12s  %10s  %12s  %12s  %12s  %s\n", "==========", "=========",
	       "=====", "===", "===", "===", "========");
}

static void print_group(const struct rep *r, const struct rep_row *row)
{
	if (r->by == REP_BY_THREAD)
		printf("# thread %u (%s) of process %u\n", row->tid, row->comm, row->pid);
	else
		printf("# process %u (%s)\n", row->pid, row->comm);
}

static void print_table(struct rep *r, struct rep_row **all, size_t n)
{
	size_t i;

	if (r->by == REP_BY_NONE)
		print_header();
	for (i = 0; i < n; i++) {
		const struct rep_row *f = all[i];
		char t[32], s[32], a[32], mi[32], ma[32];

		if (r->by != REP_BY_NONE && (!i || all[i - 1]->group != f->group)) {
			if (i)
				printf("\n");
			print_group(r, f);
			print_header();
		}
		if (f->calls > f->untimed) {
			rep_fmt_dur(t, sizeof(t), f->total);
			rep_fmt_dur(s, sizeof(s), f->self);
			rep_fmt_dur(a, sizeof(a), f->sum / (f->calls - f->untimed));
			rep_fmt_dur(mi, sizeof(mi), f->min);
			rep_fmt_dur(ma, sizeof(ma), f->max);
		} else {
			/* entries alone (no exit event): counted, not timed */
			strcpy(t, "-");
			strcpy(s, "-");
			strcpy(a, "-");
			strcpy(mi, "-");
			strcpy(ma, "-");
		}
		printf("  %12s  %12s  %10llu  %12s  %12s  %12s  %s", t, s,
		       (unsigned long long)f->calls, a, mi, ma, f->name);
		if (f->unfinished)
			printf(" (%llu unfinished)", (unsigned long long)f->unfinished);
		printf("\n");
	}
}

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: fhook report [-s KEYS] [--by thread|process] [--format table|tree|folded]\n"
		"                    [FILTERS] [PATH]\n"
		"       fhook report --diff [-s KEYS] [FILTERS] BASE NEW\n"
		"\n"
		"What the calls of a recording (default: fhook.rec) add up to.\n"
		"\n"
		"  --format table       per function: total time (a recursive function's outermost\n"
		"                       frame only), self time (less the calls it made), calls,\n"
		"                       and avg/min/max of one call (the default)\n"
		"  --format tree        the call tree: each call path once, with total, self and\n"
		"                       calls (with -F FUNC: the tree under FUNC)\n"
		"  --format folded      flame-graph stacks, \"main;run;fib SELF_NS\" per call path\n"
		"                       (flamegraph.pl, speedscope, inferno)\n"
		"  -s, --sort KEYS      total (default), self, calls, avg, min, max, name; several\n"
		"                       separated by commas, the first deciding first\n"
		"  --by thread|process  one table per thread or per process\n"
		"  --diff               BASE and NEW side by side: per function both values and\n"
		"                       the change (sorted by the change of the first key)\n"
		"  -h, --help           this text\n"
		"\n");
	cli_view_usage(f);
	fprintf(f,
		"\n"
		"A call still running when its thread's events end (exit(), a thread still\n"
		"running, a killed process) is counted up to that thread's last event and marked\n"
		"unfinished.  Exit status: 0; 1 when the recording cannot be read; 2 for bad\n"
		"usage.\n");
}

static int parse_keys(const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int k;

	if (!copy)
		return -1;
	nr_sort_keys = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "call"))
			tok = "calls";
		for (k = 0; k < KEY_NR; k++)
			if (!strcmp(tok, key_names[k]))
				break;
		if (k == KEY_NR || nr_sort_keys == MAX_KEYS) {
			fprintf(stderr, "fhook: report: unknown sort key '%s' (total, self, calls, "
				"avg, min, max, name)\n", tok);
			free(copy);
			return -1;
		}
		sort_keys[nr_sort_keys++] = k;
	}
	free(copy);
	return nr_sort_keys ? 0 : -1;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "diff", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		CLI_VIEW_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct cli_view view;
	struct rep r;
	const char *path = "fhook.rec", *format = "table";
	struct rep_row **all = NULL;
	bool diff = false;
	int c, ret = 2, by = REP_BY_NONE;
	size_t n;

	cli_view_init(&view);
	memset(&r, 0, sizeof(r));
	sort_keys[0] = KEY_TOTAL;
	nr_sort_keys = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hs:" CLI_VIEW_SHORTOPTS, opts, NULL)) != -1) {
		int v = cli_view_opt(&view, "report", c, optarg);

		if (v < 0)
			goto out;
		if (v)
			continue;
		switch (c) {
		case 's':
			if (parse_keys(optarg))
				goto out;
			break;
		case 'b':
			if (!strcmp(optarg, "thread")) {
				by = REP_BY_THREAD;
			} else if (!strcmp(optarg, "process")) {
				by = REP_BY_PROCESS;
			} else {
				fprintf(stderr, "fhook: report: --by %s: thread or process\n", optarg);
				goto out;
			}
			break;
		case 'f':
			format = optarg;
			break;
		case 'd':
			diff = true;
			break;
		case 'h':
			report_usage(stdout);
			ret = 0;
			goto out;
		default:
			report_usage(stderr);
			goto out;
		}
	}
	if (strcmp(format, "table") && strcmp(format, "tree") && strcmp(format, "folded")) {
		fprintf(stderr, "fhook: report: unknown format '%s' (table, tree, folded)\n", format);
		goto out;
	}
	if (diff) {
		if (argc - optind != 2 || strcmp(format, "table") || by != REP_BY_NONE) {
			fprintf(stderr, "fhook: report: --diff takes two recordings, BASE and NEW, "
				"and the table format\n");
			goto out;
		}
		ret = rep_diff(argv[optind], argv[optind + 1], &view, sort_keys[0] == KEY_NAME ?
			       0 : sort_keys[0]);
		goto out;
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		report_usage(stderr);
		goto out;
	}
	r.by = by;
	r.rows_wanted = !strcmp(format, "table");
	r.tree_wanted = !r.rows_wanted;
	ret = 1;
	if (rep_read(&r, "report", path, &view))
		goto out;
	if (r.tree_wanted) {
		ret = rep_print_tree(&r, !strcmp(format, "folded"));
	} else {
		all = rep_rows(&r, &n);
		if (!all) {
			fprintf(stderr, "fhook: report: out of memory\n");
			goto out;
		}
		print_table(&r, all, n);
		ret = 0;
	}
	if (r.unpaired)
		fprintf(stderr, "fhook: report: %llu exits had no entry to pair with\n",
			(unsigned long long)r.unpaired);
	if (r.unfinished && !strcmp(format, "table"))
		fprintf(stderr, "fhook: report: %llu calls had not returned when their thread's "
			"events ended: counted up to its last event (unfinished)\n",
			(unsigned long long)r.unfinished);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fhook: report: writing the output: %s\n", strerror(errno));
		ret = 1;
	}
out:
	free(all);
	if (r.d || r.rows)
		rep_free(&r);
	cli_view_fini(&view);
	return ret;
}
