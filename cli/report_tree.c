// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fhook report's call tree (--format tree), flame-graph stacks (--format
 * folded) and the comparison of two recordings (--diff).
 *
 * The tree holds each call path once: a node per function under its
 * caller's node, whatever thread made the calls, so its size is the number
 * of distinct call paths, not of calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "../lib/events/decode.h"

/* ---- nodes ------------------------------------------------------------- */

static uint64_t node_hash(const struct rep_node *up, const char *name, uint64_t ip)
{
	uint64_t h = ((uintptr_t)up >> 4) * 0x9e3779b97f4a7c15ULL ^
		     ((name ? (uintptr_t)name : ip) >> 3) * 0xc2b2ae3d27d4eb4fULL;

	return h ^ (h >> 29);
}

static int nodes_grow(struct rep *r)
{
	size_t cap = r->cap_nodes ? 2 * r->cap_nodes : 4096, i, h;
	struct rep_node **nt = calloc(cap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < r->cap_nodes; i++) {
		if (!r->nodes[i])
			continue;
		for (h = r->nodes[i]->hash; nt[h & (cap - 1)]; h++)
			;
		nt[h & (cap - 1)] = r->nodes[i];
	}
	free(r->nodes);
	r->nodes = nt;
	r->cap_nodes = cap;
	return 0;
}

static struct rep_node *node_lookup(struct rep *r, struct rep_node *up, const struct call *c);

struct rep_node *rep_node_miss(struct rep *r, struct rep_node *up, const struct call *c,
			       size_t slot)
{
	struct rep_nodecache *e;

	if (!r->nodecache && !(r->nodecache = calloc(REP_IPCACHE, sizeof(*r->nodecache))))
		return node_lookup(r, up, c);
	e = &r->nodecache[slot];
	e->node = node_lookup(r, up, c);
	e->up = up;
	e->ip = c->ip;
	e->proc = c->thr->proc;
	return e->node;
}

static struct rep_node *node_lookup(struct rep *r, struct rep_node *up, const struct call *c)
{
	struct dec_sym s;
	const char *name = dec_symbolize(r->d, c->thr, c->ip, &s) ? s.name : NULL;
	struct rep_node *n;
	size_t h, mask;
	char buf[32];

	if (r->nr_nodes * 2 >= r->cap_nodes && nodes_grow(r))
		return NULL;
	mask = r->cap_nodes - 1;
	for (h = node_hash(up, name, c->ip); (n = r->nodes[h & mask]); h++)
		if (n->parent == up && (name ? n->name == name : !n->own ? false :
					n->ip == c->ip))
			return n;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)c->ip);
		n->own = strdup(buf);
		if (!n->own) {
			free(n);
			return NULL;
		}
		name = n->own;
	}
	n->name = name;
	n->ip = c->ip;
	n->parent = up;
	n->hash = node_hash(up, name == n->own ? NULL : name, c->ip);
	if (up) {
		n->next = up->kids;
		up->kids = n;
	} else {
		n->next = r->roots;
		r->roots = n;
	}
	r->nodes[h & mask] = n;
	r->nr_nodes++;
	return n;
}

void rep_tree_free(struct rep *r)
{
	size_t i;

	for (i = 0; i < r->cap_nodes; i++) {
		if (r->nodes[i]) {
			free(r->nodes[i]->own);
			free(r->nodes[i]);
		}
	}
	free(r->nodes);
	free(r->nodecache);
	r->nodecache = NULL;
	r->nodes = NULL;
	r->roots = NULL;
}

/* ---- printing ---------------------------------------------------------- */

/*
 * The same function in several files or process images is one path: the
 * siblings of one name merge (by name, into the first), recursively.
 */
static void merge_kids(struct rep_node **list)
{
	struct rep_node *a, *b, **pb;

	for (a = *list; a; a = a->next) {
		for (pb = &a->next; (b = *pb);) {
			struct rep_node *k;

			if (strcmp(a->name, b->name)) {
				pb = &b->next;
				continue;
			}
			a->calls += b->calls;
			a->total += b->total;
			a->self += b->self;
			a->unfinished += b->unfinished;
			/* b's callees become a's; b stays allocated (the table frees it) */
			while ((k = b->kids)) {
				b->kids = k->next;
				k->parent = a;
				k->next = a->kids;
				a->kids = k;
			}
			*pb = b->next;
		}
	}
}

static int cmp_nodes(const void *x, const void *y)
{
	const struct rep_node *a = *(const struct rep_node *const *)x;
	const struct rep_node *b = *(const struct rep_node *const *)y;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* @list's shown nodes sorted (by total time, then name); NULL when none or no memory. */
static struct rep_node **sorted(struct rep_node **list, size_t *n)
{
	struct rep_node *k, **arr;
	size_t cnt = 0;

	merge_kids(list);
	for (k = *list; k; k = k->next)
		cnt += k->calls > 0;
	*n = 0;
	if (!cnt || !(arr = malloc(cnt * sizeof(*arr))))
		return NULL;
	for (k = *list; k; k = k->next)
		if (k->calls)
			arr[(*n)++] = k;
	qsort(arr, *n, sizeof(*arr), cmp_nodes);
	return arr;
}

struct prefix {
	char *buf;
	size_t len, cap;
	int err;
};

static void pre_push(struct prefix *p, const char *s, size_t n)
{
	if (p->len + n + 1 > p->cap) {
		size_t cap = (p->len + n + 1) * 2;
		char *nb = realloc(p->buf, cap);

		if (!nb) {
			p->err = -ENOMEM;
			return;
		}
		p->buf = nb;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = 0;
}

static void print_node(const struct rep_node *n, struct prefix *p, bool top, bool last)
{
	char t[32], s[32];
	struct rep_node **kids;
	size_t nr, i, keep = p->len;

	rep_fmt_dur(t, sizeof(t), n->total);
	rep_fmt_dur(s, sizeof(s), n->self);
	printf("  %12s  %12s  %10llu  %s%s%s", t, s, (unsigned long long)n->calls,
	       p->buf ? p->buf : "", top ? "" : "+-", n->name);
	if (n->unfinished)
		printf(" (%llu unfinished)", (unsigned long long)n->unfinished);
	printf("\n");
	kids = sorted((struct rep_node **)&n->kids, &nr);
	if (!top)
		pre_push(p, last ? "  " : "| ", 2);
	for (i = 0; i < nr && !p->err; i++)
		print_node(kids[i], p, false, i + 1 == nr);
	p->len = keep;
	if (p->buf)
		p->buf[keep] = 0;
	free(kids);
}

/* "a;b;c SELF_NS" for every path with self time; names never hold a ';'. */
static void print_folded(const struct rep_node *n, struct prefix *p)
{
	struct rep_node **kids;
	size_t nr, i, keep = p->len;
	const char *c;

	if (p->len)
		pre_push(p, ";", 1);
	for (c = n->name; *c; c++)
		pre_push(p, *c == ';' ? ":" : c, 1);
	if (n->self && !p->err)
		printf("%s %llu\n", p->buf, (unsigned long long)n->self);
	kids = sorted((struct rep_node **)&n->kids, &nr);
	for (i = 0; i < nr && !p->err; i++)
		print_folded(kids[i], p);
	p->len = keep;
	if (p->buf)
		p->buf[keep] = 0;
	free(kids);
}

int rep_print_tree(struct rep *r, bool folded)
{
	struct prefix p = { 0 };
	struct rep_node **roots;
	size_t nr, i;

	roots = sorted(&r->roots, &nr);
	if (!folded) {
		printf("  %12s  %12s  %10s  %s\n", "Total time", "Self time", "Calls", "Function");
		printf("  %12s  %12s  %10s  %s\n", "==========", "=========", "=====", "========");
	}
	for (i = 0; i < nr && !p.err; i++) {
		if (folded)
			print_folded(roots[i], &p);
		else
			print_node(roots[i], &p, true, i + 1 == nr);
	}
	free(roots);
	free(p.buf);
	if (p.err) {
		fprintf(stderr, "fhook: report: out of memory\n");
		return 1;
	}
	return 0;
}

/* ---- two recordings ---------------------------------------------------- */

struct diff_row {
	const char *name;
	const struct rep_row *a, *b;
	int64_t change;		/* of the sort key */
};

static int cmp_diff(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	uint64_t ma = a->change < 0 ? -(uint64_t)a->change : (uint64_t)a->change;
	uint64_t mb = b->change < 0 ? -(uint64_t)b->change : (uint64_t)b->change;

	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_row_names(const void *x, const void *y)
{
	return strcmp((*(const struct rep_row *const *)x)->name,
		      (*(const struct rep_row *const *)y)->name);
}

/* "+12.3%", "-4.0%", "new", "gone", "0.0%" */
static void fmt_change(char *buf, size_t size, uint64_t a, uint64_t b)
{
	if (a == b)
		snprintf(buf, size, "0.0%%");
	else if (!a)
		snprintf(buf, size, "new");
	else if (!b)
		snprintf(buf, size, "gone");
	else
		snprintf(buf, size, "%+.1f%%", ((double)b - (double)a) * 100.0 / (double)a);
}

int rep_diff(const char *base, const char *new, const struct cli_view *view, int key)
{
	struct rep ra = { .rows_wanted = true }, rb = { .rows_wanted = true };
	struct rep_row **xa = NULL, **xb = NULL;
	struct diff_row *rows = NULL;
	size_t na = 0, nb = 0, i = 0, j = 0, n = 0;
	int ret = 1;

	if (rep_read(&ra, "report", base, view) || rep_read(&rb, "report", new, view))
		goto out;
	xa = rep_rows(&ra, &na);
	xb = rep_rows(&rb, &nb);
	rows = calloc(na + nb + 1, sizeof(*rows));
	if (!xa || !xb || !rows) {
		fprintf(stderr, "fhook: report: out of memory\n");
		goto out;
	}
	qsort(xa, na, sizeof(*xa), cmp_row_names);
	qsort(xb, nb, sizeof(*xb), cmp_row_names);
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(xa[i]->name, xb[j]->name);
		struct diff_row *d = &rows[n++];
		uint64_t va, vb;

		d->a = c <= 0 ? xa[i++] : NULL;
		d->b = c >= 0 ? xb[j++] : NULL;
		d->name = d->a ? d->a->name : d->b->name;
		va = d->a ? rep_key_value(d->a, key) : 0;
		vb = d->b ? rep_key_value(d->b, key) : 0;
		d->change = (int64_t)(vb - va);
	}
	qsort(rows, n, sizeof(*rows), cmp_diff);
	printf("# base: %s\n# new:  %s\n", base, new);
	printf("  %12s  %12s  %8s   %12s  %12s  %8s   %9s  %9s  %9s  %s\n",
	       "Total base", "Total new", "Change", "Self base", "Self new", "Change",
	       "Calls", "Calls new", "Change", "Function");
	printf("  %12s  %12s  %8s   %12s  %12s  %8s   %9s  %9s  %9s  %s\n",
	       "==========", "=========", "======", "=========", "========", "======",
	       "=====", "=========", "======", "========");
	for (i = 0; i < n; i++) {
		const struct rep_row *a = rows[i].a, *b = rows[i].b;
		uint64_t ta = a ? a->total : 0, tb = b ? b->total : 0;
		uint64_t sa = a ? a->self : 0, sb = b ? b->self : 0;
		uint64_t ca = a ? a->calls : 0, cb = b ? b->calls : 0;
		char t1[32], t2[32], t3[16], s1[32], s2[32], s3[16], c3[24];

		rep_fmt_dur(t1, sizeof(t1), ta);
		rep_fmt_dur(t2, sizeof(t2), tb);
		fmt_change(t3, sizeof(t3), ta, tb);
		rep_fmt_dur(s1, sizeof(s1), sa);
		rep_fmt_dur(s2, sizeof(s2), sb);
		fmt_change(s3, sizeof(s3), sa, sb);
		snprintf(c3, sizeof(c3), "%+lld", (long long)cb - (long long)ca);
		printf("  %12s  %12s  %8s   %12s  %12s  %8s   %9llu  %9llu  %9s  %s\n", t1, t2, t3,
		       s1, s2, s3, (unsigned long long)ca, (unsigned long long)cb, c3,
		       rows[i].name);
	}
	ret = 0;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fhook: report: writing the output: %s\n", strerror(errno));
		ret = 1;
	}
out:
	free(rows);
	free(xa);
	free(xb);
	if (ra.d)
		rep_free(&ra);
	if (rb.d)
		rep_free(&rb);
	return ret;
}
