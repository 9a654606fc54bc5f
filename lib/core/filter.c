// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Filters that follow the object list: glob matching over the sites of
 * loaded objects, and bringing a filter made earlier up to date with the
 * objects loaded and unloaded since.
 *
 * A filter set by glob (ftrace_set_filter, ftrace_set_notrace, an fprobe's
 * glob) keeps its globs.  When objects come (dlopen) the same globs are
 * matched, in the order they were applied, against the new objects only;
 * when objects go (dlclose) their addresses leave the set, so that another
 * object mapped at the same place later inherits nothing.  A filter set by
 * address keeps only the second half, as in the kernel, where a module's
 * records leave the hashes when it is unloaded.
 *
 * Everything here runs with ftrace_lock held, inside the loader's lock,
 * after fhook_objects_sync().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "kallsyms/objects.h"
#include "util/bsearch.h"
#include "util/lockdep.h"

int fhook_ipvec_push(struct fhook_ipvec *iv, unsigned long ip)
{
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 64;
		unsigned long *n = realloc(iv->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		iv->v = n;
		iv->cap = cap;
	}
	iv->v[iv->n++] = ip;
	return 0;
}

/*
 * A glob without wildcards names functions: their sites are found from
 * where the name is, without symbolizing every site of @obj (which reads
 * its whole symbol table: most of the first probe's cost in a program of
 * 20,000 functions).
 */
static int match_name_obj(struct fhook_object *obj, const char *name, struct fhook_ipvec *iv)
{
	struct fhook_sym_range *r;
	int matched = 0, n, k;
	size_t i;

	n = fhook_object_find_name(obj, name, &r);
	for (k = 0; k < n && matched >= 0; k++) {
		i = fhook_lower_bound(obj->nr_recs, j, obj->recs[j].ip, r[k].start);
		for (; i < obj->nr_recs && obj->recs[i].ip < r[k].end; i++) {
			if (obj->recs[i].flags & FTRACE_FL_DISABLED)
				continue;
			if (fhook_ipvec_push(iv, obj->recs[i].ip)) {
				matched = -ENOMEM;
				break;
			}
			matched++;
		}
	}
	free(r);
	return n < 0 ? n : matched;
}

/* Sites of @obj in functions whose names match @glob, into @iv; the count. */
static int match_glob_obj(struct fhook_object *obj, const char *glob, struct fhook_ipvec *iv)
{
	int matched = 0;
	size_t i;

	/* an object without sites: its symbols are never read */
	fhook_object_load_sites(obj);
	if (!obj->nr_recs)
		return 0;
	if (!strpbrk(glob, "*?[\\"))
		return match_name_obj(obj, glob, iv);
	for (i = 0; i < obj->nr_recs; i++) {
		const struct fhook_sym *sym;

		if (obj->recs[i].flags & FTRACE_FL_DISABLED)
			continue;
		sym = fhook_object_sym_at(obj, obj->recs[i].ip);
		if (!sym || fnmatch(glob, fhook_sym_name(obj, sym), 0))
			continue;
		if (fhook_ipvec_push(iv, obj->recs[i].ip))
			return -ENOMEM;
		matched++;
	}
	return matched;
}

int fhook_match_glob(const char *glob, unsigned long min_gen, struct fhook_ipvec *iv)
{
	struct fhook_object *obj;
	int matched = 0;

	fhook_assert_held(&ftrace_lock);
	for (obj = fhook_objects; obj; obj = obj->next) {
		int n;

		if (obj->gen <= min_gen)
			continue;
		n = match_glob_obj(obj, glob, iv);
		if (n < 0)
			return n;
		matched += n;
	}
	return matched;
}

/* @h's globs applied, in order, to the objects loaded after it was made. */
static struct ftrace_hash *match_new_objects(const struct ftrace_hash *h)
{
	struct ftrace_hash *s = fhook_hash_new(NULL, 0);
	const char *tok;

	for (tok = h->globs; s && tok < h->globs + h->globs_len; tok += strlen(tok) + 1) {
		struct fhook_ipvec m = { 0 };
		struct ftrace_hash *t;
		bool neg = tok[0] == '!';

		if (fhook_match_glob(tok + neg, h->gen, &m) < 0) {
			fhook_hash_free(s);
			s = NULL;
		} else if (m.n) {
			t = neg ? fhook_hash_edit(s, NULL, 0, m.v, m.n)
				: fhook_hash_edit(s, m.v, m.n, NULL, 0);
			fhook_hash_free(s);
			s = t;
		}
		free(m.v);
	}
	return s;
}

struct ftrace_hash *fhook_hash_refresh(struct ftrace_hash *h, int *err)
{
	unsigned long epoch = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_RELAXED);
	struct fhook_ipvec stale = { 0 };
	struct ftrace_hash *s = NULL, *n = NULL, *t;
	size_t i;

	fhook_assert_held(&ftrace_lock);
	*err = 0;
	if (!h || h->epoch == epoch)
		return NULL;
	for (i = 0; i < h->count; i++) {
		struct fhook_object *obj = fhook_object_of(h->ips[i]);

		if (obj && obj->gen <= h->gen && fhook_object_rec(obj, h->ips[i]))
			continue;
		if (fhook_ipvec_push(&stale, h->ips[i]))
			goto nomem;
	}
	if (h->globs_len && fhook_objects_gen > h->gen) {
		s = match_new_objects(h);
		if (!s)
			goto nomem;
	}
	if (!stale.n && (!s || !s->count)) {
		/* the same addresses: only what they were checked against moves */
		h->gen = fhook_objects_gen;
		h->epoch = epoch;
		goto out;
	}
	/*
	 * Removed first, then added: an object unloaded and another loaded at
	 * the same place since the last look give the same addresses to both.
	 */
	t = fhook_hash_edit(h, NULL, 0, stale.v, stale.n);
	if (!t)
		goto nomem;
	n = fhook_hash_edit(t, s ? s->ips : NULL, s ? s->count : 0, NULL, 0);
	fhook_hash_free(t);
	if (!n)
		goto nomem;
	n->gen = fhook_objects_gen;
	n->epoch = epoch;
	/* a filter whose functions all left names no function, not all */
	if (h->count && !n->count)
		n->restricted = true;
	goto out;
nomem:
	*err = -ENOMEM;
out:
	free(stale.v);
	fhook_hash_free(s);
	return n;
}

void fhook_hash_stamp(struct ftrace_hash *h)
{
	h->gen = fhook_objects_gen;
	h->epoch = __atomic_load_n(&fhook_objects_epoch, __ATOMIC_RELAXED);
}
