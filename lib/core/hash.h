/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filter and notrace sets: sorted arrays of site addresses, replaced
 * whole (copy, then publish) so that readers never see one half-changed.
 */
#ifndef FHOOK_HASH_H
#define FHOOK_HASH_H

#include <stdbool.h>
#include <stddef.h>

struct ftrace_hash {
	size_t count;
	unsigned long ips[];
};

struct ftrace_hash *fhook_hash_new(const unsigned long *ips, size_t n);
bool fhook_hash_contains(const struct ftrace_hash *h, unsigned long ip);
static inline bool fhook_hash_empty(const struct ftrace_hash *h)
{
	return !h || !h->count;
}
/* @base (may be NULL) with @add added and @del removed; both may be NULL. */
struct ftrace_hash *fhook_hash_edit(const struct ftrace_hash *base,
				    const unsigned long *add, size_t nadd,
				    const unsigned long *del, size_t ndel);
void fhook_hash_free(struct ftrace_hash *h);

#endif /* FHOOK_HASH_H */
