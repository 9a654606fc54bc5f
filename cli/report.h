/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook report's parts (report.c: the table; report_tree.c: the call tree,
 * folded stacks and the comparison of two recordings).
 */
#ifndef FHOOK_CLI_REPORT_H
#define FHOOK_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "view.h"

enum { REP_BY_NONE, REP_BY_THREAD, REP_BY_PROCESS };

/* report's sort keys (-s) */
enum { KEY_TOTAL, KEY_SELF, KEY_CALLS, KEY_AVG, KEY_MIN, KEY_MAX, KEY_NAME, KEY_NR };

struct rep_row {
	const char *name;	/* the function's shown name */
	char *own;		/* @name's storage when it is an address */
	uint64_t ip;
	uint32_t group;		/* thread number or pid with --by */
	uint32_t pid, tid;
	char comm[16];
	uint64_t hash;
	uint64_t calls, total, self, sum, min, max, unfinished;
	uint64_t untimed;	/* calls seen by an entry event alone */
	/* frames open on one thread (others: struct rep_active), for recursion */
	uint32_t act_thr, act_n;
};

/* The row of an address in a process, found again without a symbol lookup. */
struct rep_ipcache {
	uint64_t ip;
	const void *proc;
	uint32_t group;
	struct rep_row *row;
};

#define REP_IPCACHE	(1U << 14)

/* The node of an address under a caller's node, found again without a lookup. */
struct rep_nodecache {
	struct rep_node *up, *node;
	uint64_t ip;
	const void *proc;
};

/* A call path: its function under its caller's path. */
struct rep_node {
	const char *name;
	char *own;
	struct rep_node *parent;
	struct rep_node *kids, *next;	/* first callee, next sibling */
	uint64_t ip, hash;
	uint64_t calls, total, self, unfinished;
};

struct rep_active {
	const struct rep_row *row;
	uint32_t thr;
	uint32_t count;
	uint64_t hash;
};

struct rep {
	struct dec *d;
	int by;
	bool rows_wanted, tree_wanted;	/* one or the other */
	struct rep_row **rows;	/* open addressing */
	size_t nr_rows, cap_rows;
	struct rep_active *active;
	size_t nr_active, cap_active;
	struct rep_ipcache *ipcache;
	struct rep_node **nodes;	/* open addressing, by (parent, name) */
	size_t nr_nodes, cap_nodes;
	struct rep_node *roots;
	struct rep_nodecache *nodecache;
	uint64_t unpaired, unfinished;
};

int rep_read(struct rep *r, const char *cmd, const char *path, const struct cli_view *view);
struct rep_row **rep_rows(struct rep *r, size_t *n);
void rep_free(struct rep *r);
void rep_fmt_dur(char *buf, size_t size, uint64_t ns);
/* @x's value of sort key @key (not KEY_NAME), as the table shows it */
uint64_t rep_key_value(const struct rep_row *x, int key);

struct rep_node *rep_node_miss(struct rep *r, struct rep_node *up, const struct call *c,
			       size_t slot);

/* @c's path node under @up: a direct-mapped cache before any symbol lookup. */
static inline struct rep_node *rep_node_get(struct rep *r, struct rep_node *up,
					    const struct call *c)
{
	size_t slot = (((uintptr_t)up >> 4) * 0x9e3779b1U ^ (c->ip >> 2) ^ (c->ip >> 15)) &
		      (REP_IPCACHE - 1);
	const struct rep_nodecache *e = r->nodecache ? &r->nodecache[slot] : NULL;

	if (__builtin_expect(e && e->node && e->up == up && e->ip == c->ip &&
			     e->proc == c->thr->proc, 1))
		return e->node;
	return rep_node_miss(r, up, c, slot);
}
int rep_print_tree(struct rep *r, bool folded);
void rep_tree_free(struct rep *r);
/* fhook report --diff: 0, 1 (a recording unreadable) */
int rep_diff(const char *base, const char *new, const struct cli_view *view, int key);

#endif
