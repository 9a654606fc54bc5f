// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The sites of every loaded object, as the kernel's ftrace_process_locs()
 * keeps them: read from the object's site sections, sorted, and turned
 * into nops before the object's code runs.  The objects layer below calls
 * in through the hooks set here (objects_ops); the arch layer asks
 * through its own (fhook_arch_init(), in init.c).
 *
 * Sites are read at start-up only where the compiler's pads must be
 * rewritten before the program runs; the sites of a prepared object are
 * read when something first needs them (fhook_object_load_sites).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fhook/kallsyms.h>

#include "core.h"
#include "arch/arch.h"
#include "kallsyms/objects.h"
#include "util/bsearch.h"
#include "util/rcu.h"

/* recursive: the ftrace_bug report of a site reads symbols */
static pthread_mutex_t sites_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

struct dyn_ftrace *fhook_object_rec(struct fhook_object *obj, unsigned long ip)
{
	size_t i;

	if (!__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
		return NULL;	/* nothing of ours was ever written there */
	i = fhook_lower_bound(obj->nr_recs, k, obj->recs[k].ip, ip);
	return i < obj->nr_recs && obj->recs[i].ip == ip ? &obj->recs[i] : NULL;
}

struct dyn_ftrace *ftrace_lookup_rec(unsigned long ip)
{
	struct fhook_object *obj = fhook_object_of(ip);

	if (!obj)
		return NULL;
	fhook_object_load_sites(obj);
	return fhook_object_rec(obj, ip);
}

/*
 * Sort records by ip: an LSD radix sort on the bytes in which the ips
 * differ (they all lie in one object).  The linker keeps each input file's
 * sites in order, not the whole list, and a comparison sort through a
 * callback cost hundreds of instructions per site.
 */
static int sort_recs(struct dyn_ftrace *recs, size_t nr)
{
	struct dyn_ftrace *tmp, *src = recs, *dst;
	unsigned long lo = ~0UL, hi = 0;
	size_t i, count[256], descents = 0;
	int shift;

	for (i = 1; i < nr; i++)
		descents += recs[i].ip < recs[i - 1].ip;
	if (descents <= 8) {
		/* nearly sorted (main() in .text.startup): move the few into place */
		for (i = 1; i < nr; i++) {
			struct dyn_ftrace r = recs[i];
			size_t lo_i, hi_i = i;

			if (r.ip >= recs[i - 1].ip)
				continue;
			lo_i = fhook_upper_bound(hi_i, k, recs[k].ip, r.ip);
			memmove(&recs[lo_i + 1], &recs[lo_i], (i - lo_i) * sizeof(*recs));
			recs[lo_i] = r;
		}
		return 0;
	}
	for (i = 0; i < nr; i++) {
		if (recs[i].ip < lo)
			lo = recs[i].ip;
		if (recs[i].ip > hi)
			hi = recs[i].ip;
	}
	tmp = malloc(nr * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (shift = 0; shift < 64 && ((hi - lo) >> shift); shift += 8) {
		size_t pos = 0;

		memset(count, 0, sizeof(count));
		for (i = 0; i < nr; i++)
			count[((src[i].ip - lo) >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = pos;
			pos += c;
		}
		for (i = 0; i < nr; i++)
			dst[count[((src[i].ip - lo) >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == recs ? tmp : recs;
	}
	if (src != recs)
		memcpy(recs, src, nr * sizeof(*recs));
	free(tmp);
	return 0;
}

static int object_read_sites(struct fhook_object *obj)
{
	struct fhook_elf_sites es;
	size_t i, n = 0;
	int ret;

	ret = fhook_elf_read_sites(obj->path, &es);
	if (ret)
		return ret;
	if (!es.nr)
		goto out;
	obj->recs = calloc(es.nr, sizeof(*obj->recs));
	if (!obj->recs) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < es.nr; i++) {
		unsigned long ip = es.addrs[i] + obj->base;

		/* a site must leave room for the 6-byte form's tail */
		if (!fhook_object_text(obj, ip, FHOOK_SITE_MAX))
			continue;
		obj->recs[n].ip = ip;
		obj->recs[n].flags = es.from_mcount[i] ? FTRACE_FL_MCOUNT : 0;
		obj->has_mcount |= es.from_mcount[i];
		n++;
	}
	if (sort_recs(obj->recs, n)) {
		free(obj->recs);
		obj->recs = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (n) {
		size_t w = 1;

		for (i = 1; i < n; i++)
			if (obj->recs[i].ip != obj->recs[w - 1].ip)
				obj->recs[w++] = obj->recs[i];
		n = w;
	}
	obj->nr_recs = n;
out:
	free(es.addrs);
	free(es.from_mcount);
	return ret;
}

/*
 * A prepared file's sites hold 5-byte nops already; only a 6-byte
 * __fentry__ call that `fhook prepare` turned into a 5- and a 1-byte nop
 * must be told apart, and only __mcount_loc sites can be one.  Pages of
 * other sites are not touched.
 */
static void object_mark_pad6(struct fhook_object *obj)
{
	size_t i;

	for (i = 0; obj->has_mcount && i < obj->nr_recs; i++) {
		const unsigned char *b = (const unsigned char *)obj->recs[i].ip;

		if ((obj->recs[i].flags & FTRACE_FL_MCOUNT) && fhook_site_is_nop(b) &&
		    b[5] == 0x90)
			obj->recs[i].flags |= FTRACE_FL_PAD6;
	}
}

int fhook_object_load_sites(struct fhook_object *obj)
{
	struct stat st;
	int ret = 0;

	if (__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&sites_mutex);
	if (obj->sites_loaded)
		goto out;
	/* the file must still be the one that was loaded */
	if (stat(obj->path, &st) || st.st_dev != obj->dev || st.st_ino != obj->ino) {
		fprintf(stderr, "fhook: %s changed on disk since it was loaded; its "
			"functions cannot be traced\n", obj->path);
		ret = -ESTALE;
	} else {
		ret = object_read_sites(obj);
		if (!ret)
			object_mark_pad6(obj);
	}
	__atomic_store_n(&obj->sites_loaded, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&sites_mutex);
	return ret;
}

void fhook_objects_load_all_sites(void)
{
	struct fhook_object *obj;

	for (obj = __atomic_load_n(&fhook_objects, __ATOMIC_ACQUIRE); obj;
	     obj = __atomic_load_n(&obj->next, __ATOMIC_ACQUIRE))
		fhook_object_load_sites(obj);
}

/*
 * Turn the sites of new objects into nops, in one batch: each page is made
 * writable, rewritten and restored once.
 */
static void objects_init_nops(struct fhook_object *list)
{
	struct text_poke_loc *locs = NULL, *calls;
	size_t nr = 0, nr_calls = 0, total = 0, bad = 0, i;
	struct fhook_object *obj;
	int ret = 0;

	for (obj = list; obj; obj = obj->next)
		total += obj->nr_recs;
	if (!total)
		return;
	locs = malloc(total * sizeof(*locs));
	if (!locs)
		return;
	/* pads from the start of the array, -pg calls from its end */
	calls = locs + total;
	for (obj = list; obj; obj = obj->next) {
		for (i = 0; i < obj->nr_recs; i++) {
			struct dyn_ftrace *rec = &obj->recs[i];
			const unsigned char *b = (const unsigned char *)rec->ip;
			unsigned char cur[FHOOK_SITE_MAX];

			if (rec->flags & FTRACE_FL_DISABLED)
				continue;
			if (fhook_site_is_pad(b)) {
				locs[nr].addr = rec->ip;
				locs[nr].len = FHOOK_SITE_LEN;
				locs[nr].emu_len = FHOOK_SITE_LEN;
				memcpy(locs[nr].new, fhook_site_nop, FHOOK_SITE_LEN);
				nr++;
				continue;
			}
			memcpy(cur, b, sizeof(cur));
			ret = fhook_init_nop_prepare(rec, cur, calls - 1);
			if (ret < 0) {
				if (bad++ < 4)
					fhook_ftrace_bug_obj(obj, -EINVAL, rec->ip, fhook_site_nop,
							     cur, FHOOK_SITE_LEN);
				rec->flags |= FTRACE_FL_DISABLED;
			} else if (ret > 0) {
				calls--;
				nr_calls++;
			}
		}
	}
	if (bad)
		fprintf(stderr, "fhook: %zu site(s) hold unexpected bytes and stay disabled\n",
			bad);
	if (!nr && !nr_calls)
		goto out;
	fhook_text_lock();
	ret = fhook_text_poke_init(locs, nr);
	if (!ret)
		ret = fhook_text_poke_batch(calls, nr_calls);
	if (ret) {
		fprintf(stderr, "fhook: cannot write code; %zu site(s) stay disabled\n",
			nr + nr_calls);
		for (i = 0; i < total; i++) {
			struct dyn_ftrace *rec;

			if (i >= nr && locs + i < calls)
				continue;
			rec = ftrace_lookup_rec(locs[i].addr);
			if (rec)
				rec->flags |= FTRACE_FL_DISABLED;
		}
	}
	fhook_text_unlock();
out:
	free(locs);
}

/*
 * Once initialized, a site never again holds what the compiler left: an
 * object at the same place whose first site does is another object.
 */
static bool object_same(struct fhook_object *obj)
{
	size_t i;

	for (i = 0; i < obj->nr_recs; i++) {
		const unsigned char *b = (const unsigned char *)obj->recs[i].ip;
		unsigned long t;

		if (obj->recs[i].flags & FTRACE_FL_DISABLED)
			continue;
		if (fhook_site_is_nop(b))
			return true;
		t = fhook_site_call_target(b, obj->recs[i].ip);
		return t && fhook_stub_of_code(t);
	}
	return true;
}

/*
 * Start-up reads only the section headers.  The compiler's pads must
 * become nops before any thread runs them, so an unprepared object's
 * sites are read now; those of a prepared one, and every symbol, are read
 * when something first needs them (a glob, kallsyms, a report).
 */
static void objects_added(struct fhook_object *list)
{
	struct fhook_object *obj;

	for (obj = list; obj; obj = obj->next) {
		struct fhook_elf_scan scan;

		if (fhook_elf_scan(obj->path, &scan) || !scan.nr_sections) {
			obj->sites_loaded = true;
		} else if (!scan.prepared) {
			object_read_sites(obj);
			obj->sites_loaded = true;
		}
	}
	objects_init_nops(list);
}

static void object_release(struct fhook_object *obj)
{
	free(obj->recs);
	obj->recs = NULL;
}

static const struct fhook_objects_ops objects_ops = {
	.added = objects_added,
	.same = object_same,
	.release = object_release,
};

/* ---- what the arch layer asks (lib/arch/hooks.h) ---- */

static bool arch_text_seg(unsigned long addr, struct fhook_text_seg *seg)
{
	struct fhook_object *obj = fhook_object_of(addr);
	int i;

	if (!obj)
		return false;
	for (i = 0; i < obj->nr_segs; i++)
		if (addr >= obj->segs[i].start && addr < obj->segs[i].end) {
			seg->start = obj->segs[i].start;
			seg->end = obj->segs[i].end;
			seg->prot = obj->segs[i].prot;
			return true;
		}
	return false;
}

static bool arch_is_site(unsigned long ip)
{
	struct fhook_object *obj;
	bool ret = false;

	fhook_rcu_read_lock();
	obj = fhook_object_of(ip);
	if (obj && fhook_object_rec(obj, ip))
		ret = true;
	fhook_rcu_read_unlock();
	return ret;
}

/*
 * Also a constructor of its own: a program linked with libfhook.a pulls in
 * only the files it references, and this one, not init.c, is among them.
 */
__attribute__((constructor(101))) void fhook_sites_init(void)
{
	static int done;
	static const struct fhook_arch_hooks hooks = {
		.text_seg = arch_text_seg,
		.is_site = arch_is_site,
		.list_func = ftrace_ops_list_func,
		.dispatch = fhook_dispatch,
	};

	if (done)
		return;
	done = 1;
	fhook_arch_init(&hooks);
	fhook_objects_set_ops(&objects_ops);
}

/* ---- every function with its site ---- */

int fhook_kallsyms_for_each(int (*fn)(void *data, const struct fhook_symbol *sym), void *data)
{
	fhook_internal_guard();
	struct fhook_object *obj;
	int ret = 0;

	fhook_objects_refresh();
	fhook_rcu_read_lock();
	for (obj = fhook_objects; obj && !ret; obj = obj->next) {
		size_t i, r = 0;

		fhook_object_load_syms(obj);
		fhook_object_load_sites(obj);
		for (i = 0; i < obj->nr_syms && !ret; i++) {
			const struct fhook_sym *s = &obj->syms[i];
			struct fhook_symbol sym = {
				.name = fhook_sym_name(obj, s),
				.addr = s->addr,
				.size = s->size,
				.object = obj->modname,
			};

			/* recs and syms are both sorted: walk them together */
			while (r < obj->nr_recs && obj->recs[r].ip < s->addr)
				r++;
			if (r < obj->nr_recs && obj->recs[r].ip < s->addr + s->size &&
			    !(obj->recs[r].flags & FTRACE_FL_DISABLED))
				sym.site = obj->recs[r].ip;
			ret = fn(data, &sym);
		}
	}
	fhook_rcu_read_unlock();
	return ret;
}
