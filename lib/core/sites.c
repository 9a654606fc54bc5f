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
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include <fhook/kallsyms.h>

#include "core.h"
#include "arch/arch.h"
#include "kallsyms/objects.h"
#include "util/alloc.h"
#include "util/bsearch.h"
#include "util/rcu.h"
#include "util/sort.h"
#include "util/tasks.h"

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

_Static_assert(sizeof(struct dyn_ftrace) == sizeof(struct fhook_addr_rec) &&
	       offsetof(struct dyn_ftrace, ip) == 0, "site records sort as address records");

static int sort_recs(struct dyn_ftrace *recs, size_t nr)
{
	return fhook_sort_addr_recs((struct fhook_addr_rec *)recs, nr);
}

/* Records being filled in: how many, and whether they came in order. */
struct rec_fill {
	size_t n;
	size_t unordered;		/* descents and repeats */
};

/* Keep @ip as the next record of @obj if it is a site of its text. */
static inline void rec_add(struct fhook_object *obj, struct rec_fill *f, unsigned long ip,
			   bool mcount)
{
	/* the arch's site of the compiler's record, in the text */
	if (FHOOK_SITE_ADJUST_SPAN) {
		if (!fhook_object_text(obj, ip, FHOOK_SITE_ADJUST_SPAN))
			return;
		ip = fhook_site_adjust(ip);
	}
	/* a site must leave room for the 6-byte form's tail */
	if (!fhook_object_text(obj, ip, FHOOK_SITE_MAX))
		return;
	f->unordered += f->n && ip <= obj->recs[f->n - 1].ip;
	obj->recs[f->n].ip = ip;
	obj->recs[f->n].flags = mcount ? FTRACE_FL_MCOUNT : 0;
	obj->has_mcount |= mcount;
	f->n++;
}

/*
 * Fill obj->recs from @m's mapped sections when they are the whole truth,
 * else from the copying reader (which applies relocation addends).
 */
static int object_read_sites(struct fhook_object *obj, const struct fhook_elf_site_map *m)
{
	struct fhook_elf_sites es = { 0 };
	struct rec_fill f = { 0, 0 };
	size_t i, n, total = 0;
	unsigned int s;
	int ret = 0;

	if (m && !m->copy_needed) {
		for (s = 0; s < m->nr; s++)
			total += m->sec[s].nr;
	} else {
		ret = fhook_elf_read_sites(obj->path, &es);
		if (ret)
			return ret;
		total = es.nr;
	}
	if (!total)
		goto out;
	obj->recs = fhook_malloc_whole(total * sizeof(*obj->recs));
	if (!obj->recs) {
		ret = -ENOMEM;
		goto out;
	}
	if (m && !m->copy_needed) {
		/* straight from the page cache: no copy of the list */
		for (s = 0; s < m->nr; s++)
			for (i = 0; i < m->sec[s].nr; i++)
				if (m->sec[s].addrs[i])
					rec_add(obj, &f, m->sec[s].addrs[i] + obj->base,
						m->sec[s].mcount);
	} else {
		for (i = 0; i < es.nr; i++)
			rec_add(obj, &f, es.addrs[i] + obj->base, es.from_mcount[i]);
	}
	n = f.n;
	/* the linker's order is mostly the address order: nothing to do then */
	if (f.unordered && sort_recs(obj->recs, n)) {
		free(obj->recs);
		obj->recs = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (f.unordered && n) {
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

/* Read @obj's records from its file. */
static int object_read_file_sites(struct fhook_object *obj)
{
	struct fhook_elf_site_map m;
	int ret;

	ret = fhook_elf_map_sites(obj->path, 0, &m);
	if (!ret)
		ret = object_read_sites(obj, &m);
	fhook_elf_unmap_sites(&m);
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
	if (obj->site_map) {
		/* mapped from the file that was loaded, when it was */
		ret = object_read_sites(obj, obj->site_map);
		fhook_elf_unmap_sites(obj->site_map);
		free(obj->site_map);
		obj->site_map = NULL;
		if (!ret)
			object_mark_pad6(obj);
	} else if (stat(obj->path, &st) || st.st_dev != obj->dev || st.st_ino != obj->ino) {
		/* the file must still be the one that was loaded */
		fprintf(stderr, "fhook: %s changed on disk since it was loaded; its "
			"functions cannot be traced\n", obj->path);
		ret = -ESTALE;
	} else {
		ret = object_read_file_sites(obj);
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
 * Turn the sites of an object whose records were read at start-up into
 * nops: the pads in place (no list of writes), then what else the
 * compiler left (-pg calls) in one batch.  A site holding bytes of no
 * known kind is reported and stays disabled.
 */
static void object_init_nops(struct fhook_object *obj, bool expect_pads)
{
	struct text_poke_loc *calls = NULL;
	size_t nr_calls = 0, bad = 0, i;
	long others;
	int ret = 0;

	if (!obj->nr_recs)
		return;
	fhook_text_lock();
	others = fhook_text_init_pads(&obj->recs[0].ip,
				      sizeof(obj->recs[0]) / sizeof(obj->recs[0].ip),
				      obj->nr_recs, 0, expect_pads, false);
	if (others > 0)
		calls = malloc((size_t)others * sizeof(*calls));
	for (i = 0; others > 0 && i < obj->nr_recs; i++) {
		struct dyn_ftrace *rec = &obj->recs[i];
		const unsigned char *b = (const unsigned char *)rec->ip;
		unsigned char cur[FHOOK_SITE_MAX];

		if (fhook_site_is_nop(b) || fhook_site_is_pad(b))
			continue;
		memcpy(cur, b, sizeof(cur));
		if (nr_calls == (size_t)others || !calls)
			ret = -ENOMEM;
		else
			ret = fhook_init_nop_prepare(rec, cur, &calls[nr_calls]);
		if (ret < 0) {
			if (ret == -EINVAL && bad++ < 4)
				fhook_ftrace_bug_obj(obj, -EINVAL, rec->ip, fhook_site_nop,
						     cur, FHOOK_SITE_LEN);
			rec->flags |= FTRACE_FL_DISABLED;
		} else if (ret > 0) {
			nr_calls++;
		}
	}
	if (bad)
		fprintf(stderr, "fhook: %zu site(s) hold unexpected bytes and stay disabled\n",
			bad);
	ret = others < 0 ? (int)others : fhook_text_poke_batch(calls, nr_calls);
	if (ret) {
		size_t left = 0;

		/* what still holds the compiler's bytes cannot be used */
		for (i = 0; i < obj->nr_recs; i++) {
			const unsigned char *b = (const unsigned char *)obj->recs[i].ip;

			if (obj->recs[i].flags & FTRACE_FL_DISABLED || fhook_site_is_nop(b))
				continue;
			obj->recs[i].flags |= FTRACE_FL_DISABLED;
			left++;
		}
		fprintf(stderr, "fhook: cannot write code; %zu site(s) stay disabled\n", left);
	}
	fhook_text_unlock();
	free(calls);
}

/*
 * Once initialized, a site never again holds what the compiler left: an
 * object at the same place whose first site does is another object.
 */
static bool object_same(struct fhook_object *obj)
{
	size_t i;

	if (!__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
		return !obj->init_site ||
		       (fhook_site_is_nop((const unsigned char *)obj->init_site) &&
			!fhook_site_is_pad((const unsigned char *)obj->init_site));
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

/* The first site of @m in @obj's text, or 0. */
static unsigned long __fhook_startup first_site(struct fhook_object *obj,
						const struct fhook_elf_site_map *m)
{
	unsigned int s;
	size_t i;

	for (s = 0; s < m->nr; s++)
		for (i = 0; i < m->sec[s].nr; i++)
			if (m->sec[s].addrs[i] &&
			    fhook_object_text(obj, m->sec[s].addrs[i] + obj->base,
					      FHOOK_SITE_ADJUST_SPAN ?: FHOOK_SITE_MAX))
				return fhook_site_adjust(m->sec[s].addrs[i] + obj->base);
	return 0;
}

/*
 * Start-up reads only the section headers and, for an unprepared object,
 * the site list, mapped from the page cache.  The compiler's pads must
 * become nops before any thread runs them: they are rewritten straight
 * from that list, and the records, like those of a prepared object, and
 * every symbol, are read when something first needs them (a glob,
 * kallsyms, a report).  Only an object whose sites hold something else
 * (-pg calls, foreign bytes) has its records read now.
 */
static void __fhook_startup objects_added(struct fhook_object *list)
{
	struct fhook_object *obj;

	for (obj = list; obj; obj = obj->next) {
		struct fhook_elf_site_map m;
		long others = -1;
		unsigned int s;
		bool expect;

		/*
		 * libfhook.so is never traced, as the kernel's ftrace code is
		 * notrace, nor the dynamic loader, which fhook's own paths call
		 * (dl_iterate_phdr, dlsym, lazy binding): neither is read.
		 */
		if (!obj->is_main && (fhook_object_text(obj, (unsigned long)objects_added, 1) ||
				      obj->base == getauxval(AT_BASE))) {
			obj->sites_loaded = true;
			continue;
		}
		if (fhook_elf_map_sites(obj->path, FHOOK_ELF_MAP_UNPREPARED, &m) ||
		    !m.scan.nr_sections) {
			obj->sites_loaded = true;
		} else if (!m.scan.prepared) {
			expect = !FHOOK_SITE_ADJUST_SPAN && m.have_first && fhook_site_is_pad(m.first);
			if (!m.copy_needed) {
				fhook_text_lock();
				for (s = 0, others = 0; s < m.nr && others >= 0; s++) {
					long r = fhook_text_init_pads(m.sec[s].addrs, 1, m.sec[s].nr,
								      obj->base, expect, true);

					others = r < 0 ? r : others + r;
				}
				fhook_text_unlock();
			}
			if (others) {
				/* the full path: records now, reports, -pg calls */
				object_read_sites(obj, &m);
				obj->sites_loaded = true;
				object_init_nops(obj, expect);
			} else {
				obj->init_site = first_site(obj, &m);
				/* for the records, when something needs them */
				obj->site_map = malloc(sizeof(m));
				if (obj->site_map) {
					*obj->site_map = m;
					continue;
				}
			}
		}
		fhook_elf_unmap_sites(&m);
	}
}

static void object_release(struct fhook_object *obj)
{
	if (obj->site_map) {
		fhook_elf_unmap_sites(obj->site_map);
		free(obj->site_map);
		obj->site_map = NULL;
	}
	free(obj->recs);
	obj->recs = NULL;
	free(obj->site_cls);
	obj->site_cls = NULL;
}

static const struct fhook_objects_ops objects_ops = {
	.added = objects_added,
	.same = object_same,
	.release = object_release,
};

bool __fhook_startup fhook_objects_have_sites(void)
{
	struct fhook_object *obj;
	bool ret = false;
	int rcu;

	fhook_objects_refresh();
	rcu = fhook_rcu_read_lock();
	for (obj = fhook_objects; obj && !ret; obj = obj->next)
		ret = !__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE) || obj->nr_recs;
	fhook_rcu_read_unlock(rcu);
	return ret;
}

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
	int rcu;

	rcu = fhook_rcu_read_lock();
	obj = fhook_object_of(ip);
	if (obj && fhook_object_rec(obj, ip))
		ret = true;
	fhook_rcu_read_unlock(rcu);
	return ret;
}

/*
 * Also a constructor of its own: a program linked with libfhook.a pulls in
 * only the files it references, and this one, not init.c, is among them.
 */
__attribute__((constructor(101))) void fhook_sites_init(void)
{
	static int done __fhook_startup_data;
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
	int ret = 0, rcu;

	fhook_objects_refresh();
	rcu = fhook_rcu_read_lock();
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
	fhook_rcu_read_unlock(rcu);
	return ret;
}
