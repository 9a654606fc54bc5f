// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util/bsearch.h"

static int ip_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static size_t uniq(unsigned long *v, size_t n)
{
	size_t i, w;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), ip_cmp);
	for (i = 1, w = 1; i < n; i++)
		if (v[i] != v[w - 1])
			v[w++] = v[i];
	return w;
}

struct ftrace_hash *fhook_hash_new(const unsigned long *ips, size_t n)
{
	struct ftrace_hash *h = calloc(1, sizeof(*h) + (n ? n : 1) * sizeof(unsigned long));

	if (!h)
		return NULL;
	if (n)
		memcpy(h->ips, ips, n * sizeof(*ips));
	h->count = uniq(h->ips, n);
	return h;
}

bool fhook_hash_contains(const struct ftrace_hash *h, unsigned long ip)
{
	size_t i;

	if (!h)
		return false;
	i = fhook_lower_bound(h->count, k, h->ips[k], ip);
	return i < h->count && h->ips[i] == ip;
}

struct ftrace_hash *fhook_hash_edit(const struct ftrace_hash *base,
				    const unsigned long *add, size_t nadd,
				    const unsigned long *del, size_t ndel)
{
	size_t nb = base ? base->count : 0, i, w;
	struct ftrace_hash *h, *d = NULL;

	h = calloc(1, sizeof(*h) + (nb + nadd + 1) * sizeof(unsigned long));
	if (!h)
		return NULL;
	if (base) {
		h->gen = base->gen;
		h->epoch = base->epoch;
		h->restricted = base->restricted;
		if (base->globs_len) {
			h->globs = malloc(base->globs_len);
			if (!h->globs) {
				free(h);
				return NULL;
			}
			memcpy(h->globs, base->globs, base->globs_len);
			h->globs_len = base->globs_len;
		}
	}
	if (nb)
		memcpy(h->ips, base->ips, nb * sizeof(unsigned long));
	if (nadd)
		memcpy(h->ips + nb, add, nadd * sizeof(unsigned long));
	h->count = uniq(h->ips, nb + nadd);
	if (ndel) {
		d = fhook_hash_new(del, ndel);
		if (!d) {
			fhook_hash_free(h);
			return NULL;
		}
		for (i = 0, w = 0; i < h->count; i++)
			if (!fhook_hash_contains(d, h->ips[i]))
				h->ips[w++] = h->ips[i];
		h->count = w;
		free(d);
	}
	return h;
}

int fhook_hash_add_glob(struct ftrace_hash *h, const char *tok)
{
	size_t len = strlen(tok) + 1;
	char *g = realloc(h->globs, h->globs_len + len);

	if (!g)
		return -ENOMEM;
	memcpy(g + h->globs_len, tok, len);
	h->globs = g;
	h->globs_len += len;
	if (tok[0] != '!')
		h->restricted = true;
	return 0;
}

void fhook_hash_free(struct ftrace_hash *h)
{
	if (!h)
		return;
	free(h->globs);
	free(h);
}
