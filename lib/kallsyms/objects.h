/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loaded objects of the process and what fhook knows of each: its
 * executable segments, its patchable sites and its symbols.
 *
 * The list is RCU-protected (urcu-bp): readers (the trap handler, the
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

struct fhook_stub_region;

struct fhook_seg {
	unsigned long start, end;	/* page-aligned */
	int prot;
};

/* A function symbol: 16 bytes. */
struct fhook_sym {
	unsigned long addr;
	unsigned int size;
	unsigned int name;		/* offset into the object's names */
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
	 * Sites are read at start-up only where the compiler's pads must be
	 * rewritten before the program runs; the sites of a prepared object
	 * are read when something first needs them (fhook_object_load_sites).
	 */
	bool sites_loaded;		/* recs and nr_recs are set */
	bool has_mcount;		/* some sites come from __mcount_loc */
	struct dyn_ftrace *recs;	/* sorted by ip */
	size_t nr_recs;

	bool syms_loaded;
	struct fhook_sym *syms;		/* sorted by addr */
	size_t nr_syms;
	char *names;

	/* stubs within reach of the sites: mapped when a site is first enabled */
	struct fhook_stub_region *region;
};

extern struct fhook_object *fhook_objects;
/* The newest object's generation; the number of list changes so far. */
extern unsigned long fhook_objects_gen, fhook_objects_epoch;

/*
 * Has the loader loaded or unloaded anything since the last sync?  A hint
 * read without our locks (one dl_iterate_phdr step): false may be stale by
 * the time the caller acts, true may be for a change another thread is
 * about to sync.
 */
bool fhook_objects_loader_changed(void);

/*
 * Bring the list in line with the loader's: new objects are read and their
 * sites turned into nops, objects gone are unlinked (and queued for freeing
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
/* The record of the site at @ip, if @obj's sites are loaded; never reads. */
struct dyn_ftrace *fhook_object_rec(struct fhook_object *obj, unsigned long ip);
/*
 * Read @obj's sites if they are not yet (once; any thread).  Returns 0, or
 * a negative errno when the file could not be read (the object then has no
 * sites).
 */
int fhook_object_load_sites(struct fhook_object *obj);
/* Load the sites of every known object (diagnostics, "every function"). */
void fhook_objects_load_all_sites(void);
int fhook_object_load_syms(struct fhook_object *obj);
const struct fhook_sym *fhook_object_sym_at(struct fhook_object *obj, unsigned long addr);
static inline const char *fhook_sym_name(const struct fhook_object *obj,
					 const struct fhook_sym *sym)
{
	return obj->names + sym->name;
}

/* The function a site belongs to (NULL if none). */
const struct fhook_sym *fhook_rec_sym(struct fhook_object *obj, const struct dyn_ftrace *rec);

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
/* Is @addr inside an executable segment of a known object? */
bool fhook_addr_is_text(unsigned long addr, unsigned long len);

/* ELF reading (elf.c) */
struct fhook_elf_sites {
	unsigned long *addrs;		/* link-time addresses */
	size_t nr;
	unsigned char *from_mcount;	/* per address: 1 if from __mcount_loc */
};

int fhook_elf_read_sites(const char *path, struct fhook_elf_sites *out);

/*
 * `fhook prepare` marks the site sections of a file it rewrote with this
 * flag, from the range that the ELF gABI leaves to operating systems
 * (SHF_MASKOS) and that no GNU tool assigns: every site of a marked file
 * is already a 5-byte nop, so start-up need not read them.  readelf shows
 * it as "o"; the loader never reads section headers.
 */
#define FHOOK_SHF_PREPARED	0x00400000UL

/* What start-up needs to know of a file, from its section headers alone. */
struct fhook_elf_scan {
	unsigned int nr_sections;	/* non-empty site sections */
	bool prepared;			/* all of them marked */
};

int fhook_elf_scan(const char *path, struct fhook_elf_scan *out);
/* Mark the site sections of the file image @image; returns how many. */
int fhook_elf_mark_prepared(void *image, size_t size);
int fhook_elf_read_syms(const char *path, struct fhook_sym **syms, size_t *nr, char **names);

#endif /* FHOOK_OBJECTS_H */
