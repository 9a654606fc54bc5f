// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libc's own definition of a function libfhook interposes (the signal-mask
 * calls, longjmp, the exec family, backtrace).
 *
 * Not dlsym(RTLD_NEXT): when libfhook arrives as the dependency of a
 * preloaded object (LD_PRELOAD=probe.so, probe.so needing libfhook.so),
 * the loader's search order is the program, probe.so, the program's own
 * libraries (libc among them), and only then libfhook: nothing after
 * libfhook defines these, and RTLD_NEXT finds NULL.
 *
 * Looked up in libc's own dynamic symbol table (its GNU hash table), not
 * with dlsym() on libc's handle: start-up resolves a dozen functions, and
 * each dlsym() takes the loader's lock and sets up its error handling
 * (1,300 instructions a name, and libc text an empty program never
 * touches otherwise), where the table, which the loader has already read
 * to relocate the program, answers in about a hundred.  dlsym() remains
 * for what the table does not answer (an IFUNC, a libc without a GNU hash
 * table).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core.h"

/* What a lookup needs of libc's dynamic section, found once. */
static struct {
	unsigned long base;
	const uint32_t *gnu_hash;
	const Elf64_Sym *symtab;
	const char *strtab;
	const Elf64_Half *versym;	/* NULL: no versions */
} libc_tab;
static int libc_tab_state;	/* 0: not looked for, 1: found, -1: none */

/*
 * A dynamic entry's address: the loader adds the base to them in place
 * where the dynamic section is writable, and leaves them as linked where
 * it is not.
 */
static unsigned long __fhook_startup dyn_addr(unsigned long base, unsigned long v)
{
	return v < base ? v + base : v;
}

static int __fhook_startup find_libc_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name, *slash = strrchr(name, '/');
	const ElfW(Dyn) *dyn = NULL;
	unsigned long base = info->dlpi_addr;
	int i;

	(void)size;
	(void)data;
	if (strcmp(slash ? slash + 1 : name, LIBC_SO))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		unsigned long v = dyn_addr(base, dyn->d_un.d_ptr);

		switch (dyn->d_tag) {
		case DT_GNU_HASH:
			libc_tab.gnu_hash = (const uint32_t *)v;
			break;
		case DT_SYMTAB:
			libc_tab.symtab = (const Elf64_Sym *)v;
			break;
		case DT_STRTAB:
			libc_tab.strtab = (const char *)v;
			break;
		case DT_VERSYM:
			libc_tab.versym = (const Elf64_Half *)v;
			break;
		}
	}
	libc_tab.base = base;
	return 1;
}

static bool __fhook_startup libc_tab_ready(void)
{
	int state = __atomic_load_n(&libc_tab_state, __ATOMIC_ACQUIRE);

	if (!state) {
		/* racing first calls find the same values */
		dl_iterate_phdr(find_libc_cb, NULL);
		state = libc_tab.gnu_hash && libc_tab.symtab && libc_tab.strtab &&
			libc_tab.gnu_hash[0] && libc_tab.gnu_hash[2] ? 1 : -1;
		__atomic_store_n(&libc_tab_state, state, __ATOMIC_RELEASE);
	}
	return state > 0;
}

/* The default version of function @name in libc's table, or NULL. */
static void *__fhook_startup table_lookup(const char *name)
{
	const uint32_t *gh = libc_tab.gnu_hash;
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], shift = gh[3];
	const uint64_t *bloom = (const uint64_t *)(gh + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size), *chain;
	uint32_t h = 5381, i;
	uint64_t word, mask;
	const char *c;

	for (c = name; *c; c++)
		h = h * 33 + (unsigned char)*c;
	word = bloom[(h / 64) % bloom_size];
	mask = (1ULL << (h % 64)) | (1ULL << ((h >> shift) % 64));
	if ((word & mask) != mask)
		return NULL;
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	chain = buckets + nbuckets;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		const Elf64_Sym *s = &libc_tab.symtab[i];

		/*
		 * A function defined here, in its default version: a hidden
		 * one (an old posix_spawn) is what old binaries bind to.
		 */
		if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF &&
		    ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
		    (!libc_tab.versym || (libc_tab.versym[i] & 0x7fff) >= 1) &&
		    (!libc_tab.versym || !(libc_tab.versym[i] & 0x8000)) &&
		    !strcmp(libc_tab.strtab + s->st_name, name))
			return (void *)(libc_tab.base + s->st_value);
		if (h2 & 1)
			return NULL;
	}
}

/* dlsym() on libc's handle, found once. */
static void *handle_lookup(const char *name)
{
	static void *libc;
	void *h = __atomic_load_n(&libc, __ATOMIC_ACQUIRE);

	if (!h) {
		h = fhook_loader_dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			void *old = NULL;

			/* a racing thread's handle wins; ours goes back */
			if (!__atomic_compare_exchange_n(&libc, &old, h, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE)) {
				fhook_loader_dlclose(h);
				h = old;
			}
		}
	}
	return h ? dlsym(h, name) : NULL;
}

void *__fhook_startup fhook_libc_sym(const char *name)
{
	fhook_internal_guard();
	void *sym = libc_tab_ready() ? table_lookup(name) : NULL;

	if (!sym)
		sym = handle_lookup(name);
	return sym ? sym : dlsym(RTLD_NEXT, name);
}
