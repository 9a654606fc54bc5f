// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the registered ops want of each site, for one update of the sites
 * (ops.c, update_sites()).  Asking every ops's filter about every site
 * costs sites x ops lookups per update, and a recording that puts one
 * fprobe on each of 2,000 functions registers 2,000 ops: 8e9 lookups, a
 * minute and a half.  As the kernel counts an ops's sites by walking its
 * own hash (__ftrace_hash_rec_update()), the ops with a filter are walked
 * by their filters here, into a table by address; only the ops on every
 * function (an empty filter: few) are still asked at each site.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "kallsyms/objects.h"

/*
 * The table is kept for the next update up to this many slots (2 MiB):
 * registering fprobes one by one is an update each, and freeing a table
 * of mapped pages each time costs every CPU a TLB shootdown.
 */
#define TALLY_KEEP	(1UL << 16)

static struct site_want *kept;
static size_t kept_size;

static size_t tally_slot(const struct site_tally *t, unsigned long ip)
{
	/* the low bits of a site's address are its alignment: mixed first */
	unsigned long h = (ip >> 4) * 0x9e3779b97f4a7c15UL;
	size_t i = (size_t)(h >> 20) & t->mask;

	while (t->slots[i].ip && t->slots[i].ip != ip)
		i = (i + 1) & t->mask;
	return i;
}

/* Is @ip a site the update will decide (site_decide() is asked about it)? */
static bool tally_site_live(unsigned long ip)
{
	struct fhook_object *obj = fhook_object_of(ip);
	struct dyn_ftrace *rec = obj ? fhook_object_rec(obj, ip) : NULL;

	return rec && !(rec->flags & FTRACE_FL_DISABLED);
}

int fhook_site_tally_build(struct site_tally *t)
{
	struct ftrace_ops *op;
	size_t total = 0, n = 0, size = 16, k;

	memset(t, 0, sizeof(*t));
	for (op = ftrace_ops_list; op; op = op->next) {
		if (fhook_hash_empty(op->filter_hash))
			n++;
		else
			total += op->filter_hash->count;
	}
	t->every = calloc(n + 1, sizeof(*t->every));
	if (!t->every)
		return -ENOMEM;
	while (size < 2 * total)
		size <<= 1;
	if (!total) {
		/* no ops with a filter: no table, nothing to look up site by site */
		for (op = ftrace_ops_list; op; op = op->next)
			t->every[t->nr_every++] = op;
		return 0;
	}
	if (size <= kept_size) {
		t->slots = kept;
		memset(t->slots, 0, size * sizeof(*t->slots));
	} else {
		t->slots = calloc(size, sizeof(*t->slots));
	}
	if (!t->slots) {
		fhook_site_tally_free(t);
		return -ENOMEM;
	}
	t->mask = size - 1;
	/* the list's order: with one ops at a site, it is that one either way */
	for (op = ftrace_ops_list; op; op = op->next) {
		const struct ftrace_hash *f = op->filter_hash;

		if (fhook_hash_empty(f)) {
			t->every[t->nr_every++] = op;
			continue;
		}
		for (k = 0; k < f->count; k++) {
			unsigned long ip = f->ips[k];
			struct site_want *w;

			if (fhook_hash_contains(op->notrace_hash, ip) || !tally_site_live(ip))
				continue;
			w = &t->slots[tally_slot(t, ip)];
			w->ip = ip;
			w->count++;
			w->last = op;
			w->flags |= fhook_ops_site_flags(op);
			op->nr_sites++;
		}
	}
	return 0;
}

const struct site_want *fhook_site_tally_find(const struct site_tally *t, unsigned long ip)
{
	const struct site_want *w = &t->slots[tally_slot(t, ip)];

	return w->ip ? w : NULL;
}

void fhook_site_tally_free(struct site_tally *t)
{
	size_t size = t->slots ? t->mask + 1 : 0;

	if (t->slots && t->slots != kept) {
		if (size <= TALLY_KEEP) {
			free(kept);
			kept = t->slots;
			kept_size = size;
		} else {
			free(t->slots);
		}
	}
	free(t->every);
	memset(t, 0, sizeof(*t));
}
