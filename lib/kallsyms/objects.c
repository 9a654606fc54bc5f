// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The loaded objects of the process: found with dl_iterate_phdr(), read
 * with libelf, their sites turned into nops the first time we see them.
 *
 * Work that patches an object's text runs inside a dl_iterate_phdr()
 * callback: glibc holds its loader-list lock there, and dlclose() unlinks
 * an object under that lock before it unmaps it, so an object we still see
 * in the list cannot lose its text under us.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define _LGPL_SOURCE
#include <urcu/urcu-bp.h>

#include "objects.h"
#include "../arch/x86_64/arch.h"

struct fhook_object *fhook_objects;
unsigned long fhook_objects_gen, fhook_objects_epoch;
static struct fhook_object *reaped;
/* recursive: reading an object's symbols may happen while syncing */
static pthread_mutex_t objects_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static unsigned long long seen_adds = ~0ULL, seen_subs = ~0ULL;
static int syncing;		/* syncs under way */


struct fhook_object *fhook_object_of(unsigned long addr)
{
	struct fhook_object *obj;
	int i;

	for (obj = __atomic_load_n(&fhook_objects, __ATOMIC_ACQUIRE); obj;
	     obj = __atomic_load_n(&obj->next, __ATOMIC_ACQUIRE))
		for (i = 0; i < obj->nr_segs; i++)
			if (addr >= obj->segs[i].start && addr < obj->segs[i].end)
				return obj;
	return NULL;
}

static inline bool in_exec_seg(struct fhook_object *obj, unsigned long ip, unsigned long len)
{
	return fhook_object_text(obj, ip, len);
}

bool fhook_addr_is_text(unsigned long addr, unsigned long len)
{
	struct fhook_object *obj = fhook_object_of(addr);

	return obj && in_exec_seg(obj, addr, len);
}

struct dyn_ftrace *fhook_object_rec(struct fhook_object *obj, unsigned long ip)
{
	size_t lo = 0, hi;

	if (!__atomic_load_n(&obj->sites_loaded, __ATOMIC_ACQUIRE))
		return NULL;	/* nothing of ours was ever written there */
	hi = obj->nr_recs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (obj->recs[mid].ip == ip)
			return &obj->recs[mid];
		if (obj->recs[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct dyn_ftrace *ftrace_lookup_rec(unsigned long ip)
{
	struct fhook_object *obj = fhook_object_of(ip);

	if (!obj)
		return NULL;
	fhook_object_load_sites(obj);
	return fhook_object_rec(obj, ip);
}

int fhook_object_load_syms(struct fhook_object *obj)
{
	struct fhook_sym *syms;
	size_t nr, i;
	char *names;
	int ret;

	if (__atomic_load_n(&obj->syms_loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&objects_mutex);
	ret = 0;
	if (obj->syms_loaded)
		goto out;
	{
		struct stat st;

		/* the file must still be the one that was loaded */
		if (stat(obj->path, &st) || st.st_dev != obj->dev || st.st_ino != obj->ino) {
			fprintf(stderr, "fhook: %s changed on disk since it was loaded; its "
				"symbols are not used\n", obj->path);
			ret = -ESTALE;
		} else {
			ret = fhook_elf_read_syms(obj->path, &syms, &nr, &names);
		}
	}
	if (ret) {
		/* remember that there is nothing to read */
		syms = NULL;
		nr = 0;
		names = strdup("");
	}
	for (i = 0; i < nr; i++)
		syms[i].addr += obj->base;
	obj->syms = syms;
	obj->nr_syms = nr;
	obj->names = names;
	__atomic_store_n(&obj->syms_loaded, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&objects_mutex);
	return ret;
}

const struct fhook_sym *fhook_object_sym_at(struct fhook_object *obj, unsigned long addr)
{
	size_t lo = 0, hi;
	const struct fhook_sym *s;

	if (fhook_object_load_syms(obj) && !obj->nr_syms)
		return NULL;
	hi = obj->nr_syms;
	/* the last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (obj->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &obj->syms[lo - 1];
	if (addr < s->addr + (s->size ? s->size : 1))
		return s;
	return NULL;
}

const struct fhook_sym *fhook_rec_sym(struct fhook_object *obj, const struct dyn_ftrace *rec)
{
	return fhook_object_sym_at(obj, rec->ip);
}

int fhook_object_format(struct fhook_object *obj, unsigned long ip, char *buf, size_t size,
			bool with_offset)
{
	const struct fhook_sym *sym = obj ? fhook_object_sym_at(obj, ip) : NULL;
	int n;

	if (!sym)
		n = snprintf(buf, size, "0x%lx", ip);
	else if (with_offset)
		n = snprintf(buf, size, "%s+0x%lx/0x%x", fhook_sym_name(obj, sym),
			     ip - sym->addr, sym->size);
	else
		n = snprintf(buf, size, "%s", fhook_sym_name(obj, sym));
	if (sym && obj->modname && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " [%s]", obj->modname);
	if (size && n >= (int)size)
		n = (int)size - 1;
	return n;
}

/* ---- building an object ---- */

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
			size_t lo_i = 0, hi_i = i;

			if (r.ip >= recs[i - 1].ip)
				continue;
			while (lo_i < hi_i) {
				size_t mid = (lo_i + hi_i) / 2;

				if (recs[mid].ip <= r.ip)
					lo_i = mid + 1;
				else
					hi_i = mid;
			}
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
		if (!in_exec_seg(obj, ip, 6))
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

		if ((obj->recs[i].flags & FTRACE_FL_MCOUNT) && fhook_insn_is_nop5(b) &&
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
	pthread_mutex_lock(&objects_mutex);
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
	pthread_mutex_unlock(&objects_mutex);
	return ret;
}

void fhook_objects_load_all_sites(void)
{
	struct fhook_object *obj;

	for (obj = __atomic_load_n(&fhook_objects, __ATOMIC_ACQUIRE); obj;
	     obj = __atomic_load_n(&obj->next, __ATOMIC_ACQUIRE))
		fhook_object_load_sites(obj);
}

static struct fhook_object *object_new(struct dl_phdr_info *info, bool first)
{
	struct fhook_elf_scan scan;
	struct fhook_object *obj;
	char path[PATH_MAX];
	struct stat st;
	int i;

	if (first && !info->dlpi_name[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

		if (n <= 0)
			return NULL;
		path[n] = 0;
	} else {
		if (!info->dlpi_name[0])
			return NULL;
		snprintf(path, sizeof(path), "%s", info->dlpi_name);
	}
	if (stat(path, &st))
		return NULL;	/* the vdso, or a file gone from disk */

	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	obj->path = strdup(path);
	if (!obj->path) {
		free(obj);
		return NULL;
	}
	obj->is_main = first && !info->dlpi_name[0];
	if (!obj->is_main) {
		const char *slash = strrchr(obj->path, '/');

		obj->modname = slash ? slash + 1 : obj->path;
	}
	obj->base = info->dlpi_addr;
	obj->phdr = info->dlpi_phdr;
	obj->gen = ++fhook_objects_gen;
	obj->dev = st.st_dev;
	obj->ino = st.st_ino;
	obj->text_lo = ~0UL;
	for (i = 0; i < info->dlpi_phnum && obj->nr_segs < FHOOK_MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long lo, hi;
		long psz = sysconf(_SC_PAGESIZE);

		if (ph->p_type != PT_LOAD)
			continue;
		lo = (info->dlpi_addr + ph->p_vaddr) & ~(psz - 1);
		hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + psz - 1) & ~(psz - 1);
		obj->segs[obj->nr_segs].start = lo;
		obj->segs[obj->nr_segs].end = hi;
		obj->segs[obj->nr_segs].prot = ((ph->p_flags & PF_R) ? PROT_READ : 0) |
					       ((ph->p_flags & PF_W) ? PROT_WRITE : 0) |
					       ((ph->p_flags & PF_X) ? PROT_EXEC : 0);
		obj->nr_segs++;
		if (ph->p_flags & PF_X) {
			obj->nr_exec_segs++;
			if (lo < obj->text_lo)
				obj->text_lo = lo;
			if (hi > obj->text_hi)
				obj->text_hi = hi;
		}
	}
	if (obj->text_lo == ~0UL)
		obj->text_lo = obj->text_hi = 0;
	/*
	 * Start-up reads only the section headers.  The compiler's pads must
	 * become nops before any thread runs them, so an unprepared object's
	 * sites are read now; those of a prepared one, and every symbol, are
	 * read when something first needs them (a glob, kallsyms, a report).
	 */
	if (fhook_elf_scan(obj->path, &scan) || !scan.nr_sections) {
		obj->sites_loaded = true;
	} else if (!scan.prepared) {
		object_read_sites(obj);
		obj->sites_loaded = true;
	}
	return obj;
}

static void object_free(struct fhook_object *obj)
{
	free(obj->recs);
	free(obj->syms);
	free(obj->names);
	free(obj->path);
	free(obj);
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
			unsigned char cur[6];

			if (rec->flags & FTRACE_FL_DISABLED)
				continue;
			if (fhook_insn_is_pad5(b)) {
				locs[nr].addr = rec->ip;
				locs[nr].len = CALL_INSN_SIZE;
				locs[nr].emu_len = CALL_INSN_SIZE;
				memcpy(locs[nr].new, fhook_nop5, CALL_INSN_SIZE);
				nr++;
				continue;
			}
			memcpy(cur, b, sizeof(cur));
			ret = fhook_init_nop_prepare(rec, cur, calls - 1);
			if (ret < 0) {
				if (bad++ < 4)
					fhook_ftrace_bug_obj(obj, -EINVAL, rec->ip, fhook_nop5,
							     cur, 5);
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
 * Is @obj still what the loader reports at the same address?  A library
 * unloaded and another (or the same one, freshly mapped) loaded at the
 * same base must not inherit the old records.
 */
static bool object_is(struct fhook_object *obj, struct dl_phdr_info *info, bool first)
{
	struct stat st;
	size_t i;

	if (obj->is_main)
		return first;
	if (strcmp(obj->path, info->dlpi_name) || stat(obj->path, &st) ||
	    st.st_dev != obj->dev || st.st_ino != obj->ino)
		return false;
	/* once initialized, a site never again holds what the compiler left */
	for (i = 0; i < obj->nr_recs; i++) {
		const unsigned char *b = (const unsigned char *)obj->recs[i].ip;
		unsigned long t;

		if (obj->recs[i].flags & FTRACE_FL_DISABLED)
			continue;
		if (fhook_insn_is_nop5(b))
			return true;
		t = fhook_insn_call_target(b, obj->recs[i].ip);
		return t && fhook_stub_of_code(t);
	}
	return true;
}

struct sync_state {
	struct fhook_object *added;
	int first;
	int changed;
};

static int sync_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sync_state *st = data;
	struct fhook_object *obj;
	bool first = !st->first++;

	(void)size;
	if (first && info->dlpi_adds == seen_adds && info->dlpi_subs == seen_subs)
		return 1;	/* nothing was loaded or unloaded */
	if (first) {
		__atomic_store_n(&seen_adds, info->dlpi_adds, __ATOMIC_RELAXED);
		__atomic_store_n(&seen_subs, info->dlpi_subs, __ATOMIC_RELAXED);
		for (obj = fhook_objects; obj; obj = obj->next)
			obj->seen = false;
		st->changed = -1;	/* a full walk follows */
	}
	for (obj = fhook_objects; obj; obj = obj->next)
		if (obj->base == info->dlpi_addr && obj->phdr == info->dlpi_phdr &&
		    object_is(obj, info, first)) {
			obj->seen = true;
			return 0;
		}
	for (obj = st->added; obj; obj = obj->next)
		if (obj->base == info->dlpi_addr && obj->phdr == info->dlpi_phdr)
			return 0;
	obj = object_new(info, first);
	if (obj) {
		obj->next = st->added;
		st->added = obj;
	}
	return 0;
}

int fhook_objects_sync(void)
{
	struct sync_state st = { 0 };
	struct fhook_object **pp, *obj;
	int changed = 0;

	pthread_mutex_lock(&objects_mutex);
	__atomic_add_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
	dl_iterate_phdr(sync_cb, &st);
	if (st.changed) {
		/* unlink what the loader no longer has */
		for (pp = &fhook_objects; (obj = *pp);) {
			if (obj->seen) {
				pp = &obj->next;
				continue;
			}
			__atomic_store_n(pp, obj->next, __ATOMIC_RELEASE);
			obj->next = reaped;
			reaped = obj;
			changed++;
		}
	}
	if (st.added) {
		/* keep load order: the executable first, as the kernel's vmlinux */
		struct fhook_object *rev = NULL;

		while ((obj = st.added)) {
			st.added = obj->next;
			obj->next = rev;
			rev = obj;
			changed++;
		}
		for (pp = &fhook_objects; *pp; pp = &(*pp)->next)
			;
		__atomic_store_n(pp, rev, __ATOMIC_RELEASE);
		/*
		 * Sites become nops before anyone can hook them: ops are changed
		 * only inside the loader's lock, which we hold.  Publishing first
		 * lets the patcher read and find the protection of these pages
		 * directly, not through a system call per site.
		 */
		objects_init_nops(rev);
	}
	if (changed)
		__atomic_add_fetch(&fhook_objects_epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&objects_mutex);
	return changed;
}

static int changed_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(bool *)data = info->dlpi_adds != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) ||
			info->dlpi_subs != __atomic_load_n(&seen_subs, __ATOMIC_RELAXED);
	return 1;
}

bool fhook_objects_loader_changed(void)
{
	bool changed = true;

	/* a sync under way may have recorded the loader's counts already */
	if (__atomic_load_n(&syncing, __ATOMIC_SEQ_CST))
		return true;
	dl_iterate_phdr(changed_cb, &changed);
	return changed;
}

struct fhook_object *fhook_objects_detach_reaped(void)
{
	struct fhook_object *list;

	pthread_mutex_lock(&objects_mutex);
	list = reaped;
	reaped = NULL;
	pthread_mutex_unlock(&objects_mutex);
	return list;
}

void fhook_objects_free_list(struct fhook_object *list)
{
	while (list) {
		struct fhook_object *next = list->next;

		object_free(list);
		list = next;
	}
}

struct locked_call {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	int done;
};

static int locked_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct locked_call *c = data;

	(void)info;
	(void)size;
	c->ret = c->fn(c->arg);
	c->done = 1;
	return 1;
}

int fhook_loader_locked(int (*fn)(void *arg), void *arg)
{
	struct locked_call c = { fn, arg, 0, 0 };

	dl_iterate_phdr(locked_cb, &c);
	if (!c.done)
		c.ret = fn(arg);
	return c.ret;
}

static int sync_fn(void *arg)
{
	(void)arg;
	return fhook_objects_sync();
}

int fhook_objects_refresh(void)
{
	return fhook_loader_locked(sync_fn, NULL);
}
