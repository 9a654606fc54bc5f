/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loaded objects of the process and what fhook knows of each: its
 * executable segments, its patchable sites and its symbols.
 *
 * The list is RCU-protected (util/rcu.h): readers (the trap handler, the
 * symbolizer) walk it inside a read-side critical section; it is changed
 * only by fhook_objects_sync(), under ftrace_lock and the loader's lock.
 */
#ifndef FHOOK_OBJECTS_H
#define FHOOK_OBJECTS_H

#include <stddef.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <fhook/dyn_ftrace.h>
#include <fhook/internal/elf.h>

struct fhook_stub_region;

struct fhook_seg {
	unsigned long start, end;	/* page-aligned */
	int prot;
};

#define FHOOK_MAX_SEGS	8

struct fhook_object {
	struct fhook_object *next;
	char *path;			/* the file it was loaded from */
	const char *modname;		/* basename; NULL for the executable */
	unsigned long base;		/* load bias (l_addr) */
	const void *phdr;		/* with base, the object's identity */
	dev_t dev;
	ino_t ino;
	unsigned long text_lo, text_hi;	/* bounds of the executable segments */
	struct fhook_seg segs[FHOOK_MAX_SEGS];
	int nr_segs;
	int nr_exec_segs;
	bool is_main;
	bool seen;			/* scratch for fhook_objects_sync() */
	unsigned long gen;		/* load generation: later objects, larger */

	/*
	 * The object's sites: kept here, owned by lib/core (sites.c), which
	 * fills them in its objects hooks and when something first needs
	 * them; this layer never reads them.
	 */
	bool sites_loaded;		/* recs and nr_recs are set */
	bool has_mcount;		/* some sites come from __mcount_loc */
	struct dyn_ftrace *recs;	/* sorted by ip */
	size_t nr_recs;
	/*
	 * A site rewritten at start-up while the records stay unread: what
	 * tells this object from another mapped at the same place later.
	 */
	unsigned long init_site;
	/*
	 * The site list start-up mapped from the page cache to rewrite the
	 * pads, kept until the records are read from it (by lib/core).
	 */
	struct fhook_elf_site_map *site_map;

	bool syms_loaded;
	struct fhook_sym *syms;		/* sorted by addr */
	size_t nr_syms;
	char *names;

	/* stubs within reach of the sites (lib/core): when a site is first enabled */
	struct fhook_stub_region *region;
	/*
	 * Per site (lib/core), 1 + what its function reads of the registers
	 * a trampoline saves (the arch's class); 0: not asked yet.
	 */
	unsigned char *site_cls;
};

extern struct fhook_object *fhook_objects;
/* The newest object's generation; the number of list changes so far. */
extern unsigned long fhook_objects_gen, fhook_objects_epoch;

/*
 * What the layer above does when objects come and go, handed over once
 * before the first sync.  Each is called with the list's lock held.
 */
struct fhook_objects_ops {
	/* @list (linked by ->next, in load order) was just published. */
	void (*added)(struct fhook_object *list);
	/* Is @obj, at the same place and from the same file, still the one we know? */
	bool (*same)(struct fhook_object *obj);
	/* @obj is being freed: free what the layer above hung on it. */
	void (*release)(struct fhook_object *obj);
};

void fhook_objects_set_ops(const struct fhook_objects_ops *ops);

/*
 * Has the loader loaded or unloaded anything since the last sync?  A hint
 * read without our locks (one dl_iterate_phdr step): false may be stale by
 * the time the caller acts, true may be for a change another thread is
 * about to sync.
 */
bool fhook_objects_loader_changed(void);

/*
 * Bring the list in line with the loader's: new objects are read and
 * handed to the added hook, objects gone are unlinked (and queued for freeing
 * after a grace period).  Call with ftrace_lock held, from inside
 * fhook_loader_locked().  Returns the number of objects added or removed.
 */
int fhook_objects_sync(void);

/*
 * Run @fn with the loader's list locked, so that no object can be unloaded
 * (and its text unmapped) while @fn patches it.  @fn must not wait for a
 * grace period: an RCU reader may be blocked on the same lock.
 */
int fhook_loader_locked(int (*fn)(void *arg), void *arg);

/*
 * Objects unlinked by syncs so far: detach them, wait for a grace period,
 * then free them.
 */
struct fhook_object *fhook_objects_detach_reaped(void);
void fhook_objects_free_list(struct fhook_object *list);

/* Sync under the loader's lock. */
int fhook_objects_refresh(void);

struct fhook_object *fhook_object_of(unsigned long addr);
int fhook_object_load_syms(struct fhook_object *obj);
const struct fhook_sym *fhook_object_sym_at(struct fhook_object *obj, unsigned long addr);

/* Run-time addresses [start, end): where fhook_object_sym_at() gives one symbol. */
struct fhook_sym_range {
	unsigned long start, end;
};

/*
 * Where the function symbols of @obj named @name are, as
 * fhook_object_sym_at() sees them (an alias its table drops is not
 * found), sorted.  Before anything has needed @obj's whole table, it is
 * not read for this: one pass over the file's mapped table finds the
 * name (the first lookup of a function in a program of 20,000 cost more
 * than the rest of an attach).  Returns how many (*@out malloc'd), or a
 * negative errno.
 */
int fhook_object_find_name(struct fhook_object *obj, const char *name,
			   struct fhook_sym_range **out);
static inline const char *fhook_sym_name(const struct fhook_object *obj,
					 const struct fhook_sym *sym)
{
	return obj->names + sym->name;
}

/*
 * "name+0xoff/0xsize [object]" (or "name [object]") of @ip in @obj, which
 * may be NULL ("0x<ip>"), without looking for new objects.  Returns the
 * length written, cut to @size.
 */
int fhook_object_format(struct fhook_object *obj, unsigned long ip, char *buf, size_t size,
			bool with_offset);

/* Is [@addr, @addr + @len) inside an executable segment of @obj? */
static inline bool fhook_object_text(const struct fhook_object *obj, unsigned long addr,
				     unsigned long len)
{
	int i;

	if (obj->nr_exec_segs == 1)
		return addr >= obj->text_lo && addr + len <= obj->text_hi;
	for (i = 0; i < obj->nr_segs; i++)
		if ((obj->segs[i].prot & PROT_EXEC) && addr >= obj->segs[i].start &&
		    addr + len <= obj->segs[i].end)
			return true;
	return false;
}

#endif /* FHOOK_OBJECTS_H */
