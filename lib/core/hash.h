/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filter and notrace sets: sorted arrays of site addresses, replaced
 * whole (copy, then publish) so that readers never see one half-changed.
 *
 * A set made from globs keeps them: objects loaded later (dlopen) are
 * matched against the same globs, in the same order, and the sites of
 * objects unloaded since are dropped (fhook_ops_refresh_hashes() in
 * ops.c).  @gen and @epoch say what the addresses were taken from.
 */
#ifndef FHOOK_HASH_H
#define FHOOK_HASH_H

#include <stdbool.h>
#include <stddef.h>

struct ftrace_hash {
	size_t count;
	unsigned long gen;	/* objects up to this load generation were matched */
	unsigned long epoch;	/* the object list the addresses were checked against */
	char *globs;		/* "glob\0!glob\0...", in the order they were applied */
	size_t globs_len;
	/*
	 * Empty means "no function", not "every function": a glob that adds
	 * was applied, or every address left with its object.
	 */
	bool restricted;
	unsigned long ips[];
};

struct ftrace_hash *fhook_hash_new(const unsigned long *ips, size_t n);
bool fhook_hash_contains(const struct ftrace_hash *h, unsigned long ip);
/* No filter at all: every function. */
static inline bool fhook_hash_empty(const struct ftrace_hash *h)
{
	return !h || (!h->count && !h->restricted);
}
/*
 * @base (may be NULL) with @add added and @del removed; both may be NULL.
 * The copy keeps @base's globs, generation and epoch.
 */
struct ftrace_hash *fhook_hash_edit(const struct ftrace_hash *base,
				    const unsigned long *add, size_t nadd,
				    const unsigned long *del, size_t ndel);
/* Append the glob @tok ("!glob" removes) to @h's list; -ENOMEM. */
int fhook_hash_add_glob(struct ftrace_hash *h, const char *tok);
void fhook_hash_free(struct ftrace_hash *h);

#endif /* FHOOK_HASH_H */
