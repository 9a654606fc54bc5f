/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals of the events layer shared by its files.
 */
#ifndef FHOOK_EV_H
#define FHOOK_EV_H

#include <stdbool.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fhook/internal/events.h>

/* One symbol of a program file, from .symtab (else .dynsym). */
struct ev_sym {
	unsigned long addr;
	unsigned long size;
	const char *name;
	bool func;
	bool site;	/* a function with a patchable site */
};

struct ev_found;

struct ev_file {
	char *path;
	/*
	 * fhook_event_prog_open() reads no symbol table: a name is looked up
	 * in the file's table as it is (ev_prog_find()), and the table is
	 * read and sorted when something first needs it whole
	 * (ev_file_load()).  Until then @unread is set and @syms is empty.
	 */
	bool unread;
	struct ev_sym *syms;	/* sorted by address */
	size_t nr_syms;
	char *names;
	struct ev_found *found;	/* names looked up while @unread */
	struct fhook_elf_file *elf;
	Dwarf *dw;		/* NULL without DWARF; @dwfl's */
	Dwfl *dwfl;
	/* its functions' definitions by name (symbol or linkage name), sorted; built once */
	struct ev_dw_def *defs;
	size_t nr_defs;
	bool defs_built;
};

struct cxx_memo;

struct fhook_event_prog {
	struct ev_file *files;
	int nr_files;
	/* the demangled forms of its C++ symbols, as asked (prog_cxx.c) */
	struct cxx_memo *cxx_memo;
	size_t cxx_memo_cap, cxx_memo_n;
	/* the files' DWARF is opened when a definition first needs it (ev_prog_dwarf()) */
	bool dwarf_opened;
	bool has_dwarf;
	/*
	 * Set by the command: is link-time address @addr of file @path, in
	 * the function [@start, +@size), the first byte of an instruction?
	 * 0, -EILSEQ, or another negative errno when it cannot tell.
	 */
	int (*insn_check)(const char *path, unsigned long start, unsigned long size,
			  unsigned long addr);
};

/* prog.c */
/* Has any file of @prog DWARF?  Opens it the first time (each file's ->dw). */
bool ev_prog_dwarf(struct fhook_event_prog *prog);
const struct ev_sym *ev_prog_find(struct fhook_event_prog *prog, const char *name,
				  bool func, int *file);
/* The same among the files that @mod names (a path, or a file name), or among all for NULL. */
const struct ev_sym *ev_prog_find_in(struct fhook_event_prog *prog, const char *mod,
				     const char *name, bool func, int *file);
/* Does a file of @prog go by @mod? */
bool ev_prog_has_mod(struct fhook_event_prog *prog, const char *mod);
int ev_prog_match_glob(struct fhook_event_prog *prog, const char *glob);
/*
 * A function a glob matches, by the name it is probed under: 0 to go on,
 * else the value the walk then returns.
 */
typedef int (*ev_glob_fn)(const char *name, void *arg);
/* The same, each sited function handed to @fn (a name in several files each time). */
int ev_prog_match_glob_each(struct fhook_event_prog *prog, const char *glob, ev_glob_fn fn,
			    void *arg);
/*
 * A kprobe glob: the functions (one per address, with or without a site)
 * of the file @mod names (NULL: the executable) whose names match @glob;
 * how many, -ENOENT when no file goes by @mod.  *@file is that file,
 * *@skipped how many of them fhook runs itself and a glob leaves out.
 */
int ev_prog_kprobe_glob(struct fhook_event_prog *prog, const char *mod, const char *glob,
			int *file, int *skipped);
/* The file a kprobe's @mod names (NULL: the executable), its table read; *@file its index. */
struct ev_file *ev_prog_kprobe_file(struct fhook_event_prog *prog, const char *mod, int *file);
/* The same, each function probed (none of those skipped) handed to @fn by its first name. */
int ev_prog_kprobe_glob_each(struct fhook_event_prog *prog, const char *mod, const char *glob,
			     int *file, int *skipped, ev_glob_fn fn, void *arg);
/*
 * The mangled names of the sited functions whose C++ name matches @pattern
 * (with or without parameters); returns how many (*out malloc'd) or -ENOMEM.
 */
int ev_prog_match_cxx(struct fhook_event_prog *prog, const char *pattern, bool glob,
		      char ***out);
/*
 * The sited C++ functions whose names match the glob @pattern, each handed
 * to @fn (once, however many files hold it) by the shortest form an exact
 * definition names it alone by (@written: "ns::f(int)",
 * "ns::Box<int>::get()const", or the mangled name) and by its symbol
 * (@mangled).  Returns how many, or a negative errno.
 */
typedef int (*ev_cxx_fn)(const char *written, const char *mangled, void *arg);
int ev_prog_cxx_glob_each(struct fhook_event_prog *prog, const char *pattern, ev_cxx_fn fn,
			  void *arg);
/* The kprobe-file form of ev_prog_cxx_glob_each(): one function per address, all of them. */
int ev_prog_kprobe_cxx_glob_each(struct fhook_event_prog *prog, const char *mod,
				 const char *pattern, int *file, int *skipped, ev_cxx_fn fn,
				 void *arg);
/*
 * The functions of kprobe file @mod (NULL: the executable) that the C++
 * name @name names exactly: how many (addresses), and when one, its
 * symbol in *@mangled (malloc'd); -ENOENT when no file goes by @mod.
 */
int ev_prog_kprobe_cxx(struct fhook_event_prog *prog, const char *mod, const char *name,
		       int *file, char **mangled);
/* Free what prog_cxx.c kept of @prog. */
void ev_prog_cxx_free(struct fhook_event_prog *prog);
/*
 * The ':' that ends MOD in a kprobe's "[MOD:]SYM", or NULL: the last one
 * that is not half of a C++ "::" ("libgeo.so:geo::scale(double,int)").
 */
char *ev_mod_colon(char *sym);
/* Can @name only be C++ ("ns::f", "f(int)", "f<int>")? */
bool ev_cxx_name(const char *name);
/* Read @f's whole symbol table if it is not yet (thread-safe); 0 or a negative errno. */
int ev_file_load(struct ev_file *f);
/* The function containing @addr; @f's table must be read (ev_file_load()). */
const struct ev_sym *ev_file_sym_at(const struct ev_file *f, unsigned long addr);

/* The DWARF view of a function (dwarf.c). */
struct ev_dw_func {
	Dwarf_Die die;
	int nr_params;
	bool returns_void;
	Dwarf_Die ret_type;
};

/*
 * The function @name of the file @mod names (NULL: any file): 0, -ENOENT,
 * or -ENODATA when the file whose symbol it is has no DWARF.
 */
int ev_dw_find_func(struct fhook_event_prog *prog, const char *mod, const char *name,
		    struct ev_dw_func *fn);
/* Is @f the file @mod names: its path, or its file name? */
bool ev_file_is(const struct ev_file *f, const char *mod);
/* Name of parameter @i (NULL if it has none) and its type. */
const char *ev_dw_param(struct ev_dw_func *fn, int i, Dwarf_Die *type);
/* Strip typedefs and qualifiers; false for void. */
bool ev_dw_peel(Dwarf_Die *type);
/* Find member @name of a struct/union, looking into anonymous members. */
bool ev_dw_member(Dwarf_Die *su, const char *name, Dwarf_Die *mtype,
		  unsigned long *bitoffs, unsigned int *bitsize);
bool ev_dw_is_ptr(Dwarf_Die *t, Dwarf_Die *target);
bool ev_dw_is_struct(Dwarf_Die *t);
bool ev_dw_is_char(Dwarf_Die *t);
bool ev_dw_is_char_array(Dwarf_Die *t);
/* Where the ABI passes parameter @i: FHOOK_FOP_ARG's param, or -1. */
int ev_dw_param_loc(struct ev_dw_func *fn, int i);
/* A value of @t is returned in %xmm0. */
bool ev_dw_is_sse(Dwarf_Die *t);
/* The fetch type DWARF suggests for a value of @t (FHOOK_EVT_*). */
int ev_dw_fetch_type(Dwarf_Die *t);

#endif
