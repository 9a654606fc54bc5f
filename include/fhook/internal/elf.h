/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook's ELF reader: the one that reads an object's sites and symbols,
 * shared by libfhook (lib/kallsyms/elf.c) and the fhook command, which
 * builds the same file into itself.  Not installed, not part of the API.
 *
 * It reads only the section headers, the site sections and the symbol
 * tables, with pread() into buffers of its own: a traced process pays no
 * libelf and no page faults for sections it does not need.  Every offset
 * and size is checked against the file; a malformed file is -ENOEXEC.
 */
#ifndef FHOOK_INTERNAL_ELF_H
#define FHOOK_INTERNAL_ELF_H

#include <stdbool.h>
#include <stddef.h>

/* A symbol: 16 bytes. */
struct fhook_sym {
	unsigned long addr;
	unsigned int size;
	unsigned int name : 31;		/* offset into the names */
	unsigned int data : 1;		/* STT_OBJECT (only with FHOOK_ELF_SYMS_DATA) */
};

/* the site sections' addresses: __patchable_function_entries and __mcount_loc */
struct fhook_elf_sites {
	unsigned long *addrs;		/* link-time addresses */
	size_t nr;
	unsigned char *from_mcount;	/* per address: 1 if from __mcount_loc */
};

/* -ENOEXEC: not a 64-bit ELF file of this machine, or malformed. */
int fhook_elf_read_sites(const char *path, struct fhook_elf_sites *out);

/* Is @path a 64-bit ELF file whose section headers can be read?  0 or -ENOEXEC/-errno. */
int fhook_elf_check(const char *path);

/*
 * A file opened once, for a reader with many questions (the command's
 * event definitions): its headers read at the open, every answer from the
 * same descriptor.  The path functions below each open the file for one
 * answer; fhook_elf_file_*() are the same on an opened file.
 */
struct fhook_elf_file;

/* 0 or what fhook_elf_check() returns; *@out is NULL on error. */
int fhook_elf_file_open(const char *path, struct fhook_elf_file **out);
void fhook_elf_file_close(struct fhook_elf_file *f);
/* Its descriptor, owned by @f (for a reader of the same file: dup() it). */
int fhook_elf_file_fd(const struct fhook_elf_file *f);
int fhook_elf_file_read_sites(struct fhook_elf_file *f, struct fhook_elf_sites *out);

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

/*
 * The site sections of a file, mapped read-only from the page cache: the
 * addresses are read in place, never copied, so a traced process pays no
 * fresh memory for a list it reads once.
 */
#define FHOOK_ELF_MAP_SECTIONS	4

struct fhook_elf_site_map {
	struct fhook_elf_scan scan;
	unsigned int nr;		/* sections mapped */
	bool copy_needed;		/* some could not be: use fhook_elf_read_sites() */
	/*
	 * The file's bytes at the first site: what the compiler left at
	 * every site, most likely, learnt without touching the loaded text.
	 */
	bool have_first;
	unsigned char first[8];
	struct {
		const unsigned long *addrs;	/* link-time addresses; 0 in a slot: none */
		size_t nr;
		bool mcount;			/* from __mcount_loc */
		void *map;
		size_t map_len;
	} sec[FHOOK_ELF_MAP_SECTIONS];
};

/* fhook_elf_map_sites() flags */
#define FHOOK_ELF_MAP_UNPREPARED	0x1	/* map nothing if the file is prepared */

/*
 * Scan @path's section headers (into @m->scan) and map its site sections.
 * copy_needed is set where the mapped list would not be the whole truth:
 * a slot left zero with the value in a RELATIVE relocation (only
 * fhook_elf_read_sites() applies those), a misaligned section, or more
 * sections than fit.  Returns 0 or a negative errno; release with
 * fhook_elf_unmap_sites() either way.
 */
int fhook_elf_map_sites(const char *path, unsigned int flags, struct fhook_elf_site_map *m);
int fhook_elf_file_map_sites(struct fhook_elf_file *f, unsigned int flags,
			     struct fhook_elf_site_map *m);
void fhook_elf_unmap_sites(struct fhook_elf_site_map *m);
/* Mark the site sections of the file image @image; returns how many. */
int fhook_elf_mark_prepared(void *image, size_t size);

/* fhook_elf_read_syms() flags */
#define FHOOK_ELF_SYMS_DATA	0x1	/* variables (STT_OBJECT) too */
#define FHOOK_ELF_SYMS_ALIASES	0x2	/* every name; else one symbol per address */

/*
 * The function symbols of @path (.symtab, else .dynsym), sorted by
 * address, at link-time addresses; *@names holds their names.  Returns 0
 * or a negative errno; on error nothing is allocated.
 */
int fhook_elf_read_syms(const char *path, unsigned int flags, struct fhook_sym **syms,
			size_t *nr, char **names);
int fhook_elf_file_read_syms(struct fhook_elf_file *f, unsigned int flags,
			     struct fhook_sym **syms, size_t *nr, char **names);

/* A symbol found by its name (fhook_elf_find_syms()). */
struct fhook_elf_named {
	unsigned long addr;		/* link-time address */
	unsigned int size;
	bool data;			/* STT_OBJECT */
	/*
	 * Without FHOOK_ELF_SYMS_ALIASES: is this the symbol that
	 * fhook_elf_read_syms() keeps at its address (else an alias it
	 * drops), and where does the next symbol of that table start (0:
	 * nowhere)?
	 */
	bool kept;
	unsigned long next;
	unsigned int index;		/* in the file's table */
};

/*
 * The symbols named @name of @path, from the table and with the @flags of
 * fhook_elf_read_syms(), in table order, found in one pass over the mapped
 * table (two without FHOOK_ELF_SYMS_ALIASES): a lookup by name that reads,
 * copies and sorts nothing.  *@out is malloc'd (NULL when none found).
 * Returns how many were found, or a negative errno.
 */
int fhook_elf_find_syms(const char *path, const char *name, unsigned int flags,
			struct fhook_elf_named **out);
int fhook_elf_file_find_syms(struct fhook_elf_file *f, const char *name, unsigned int flags,
			     struct fhook_elf_named **out);

#endif /* FHOOK_INTERNAL_ELF_H */
