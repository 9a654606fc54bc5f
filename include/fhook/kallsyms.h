/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fhook: the kallsyms of a process.
 *
 * Symbols of every loaded object (the executable, its libraries, objects
 * loaded by dlopen), from .symtab, falling back to .dynsym.  Objects other
 * than the executable are named after the symbol in brackets, like the
 * kernel's modules: "foo+0x4/0x20 [libfoo.so]".
 *
 * These functions may allocate and take locks: call them from ordinary
 * thread context, not from a signal handler or an ftrace handler's hot path.
 */
#ifndef FHOOK_KALLSYMS_H
#define FHOOK_KALLSYMS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KSYM_NAME_LEN		512
#define KSYM_SYMBOL_LEN		(KSYM_NAME_LEN + 128)

/* Address of the function or object @name; 0 if there is none. */
unsigned long kallsyms_lookup_name(const char *name);

/* Size of the symbol containing @addr and the offset into it; 0 if none, else 1. */
int kallsyms_lookup_size_offset(unsigned long addr, unsigned long *symbolsize,
				unsigned long *offset);

/*
 * Name of the symbol containing @addr (copied into @namebuf, KSYM_NAME_LEN
 * bytes), its size, the offset, and the object's name (NULL for the
 * executable).  Returns @namebuf, or NULL if @addr is in no symbol.
 */
const char *kallsyms_lookup(unsigned long addr, unsigned long *symbolsize,
			    unsigned long *offset, const char **modname, char *namebuf);

/*
 * sprint_symbol - "name+0xoff/0xsize [object]" of @address into @buffer
 * (at most KSYM_SYMBOL_LEN bytes; longer names are cut).  An address in no
 * symbol prints as "0x<hex>".  Returns the length.
 */
int sprint_symbol(char *buffer, unsigned long address);
int sprint_symbol_no_offset(char *buffer, unsigned long address);
int snprint_symbol(char *buffer, size_t size, unsigned long address);

/*
 * Call @fn for every function symbol of every loaded object until it
 * returns non-zero (which is then returned).
 */
int kallsyms_on_each_symbol(int (*fn)(void *data, const char *name, unsigned long addr),
			    void *data);

struct fhook_symbol {
	const char *name;
	unsigned long addr;
	unsigned long size;
	const char *object;	/* NULL for the executable */
	unsigned long site;	/* its patchable site, 0 if it has none */
};

int fhook_kallsyms_for_each(int (*fn)(void *data, const struct fhook_symbol *sym),
			    void *data);

#ifdef __cplusplus
}
#endif

#endif /* FHOOK_KALLSYMS_H */
