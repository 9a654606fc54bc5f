// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The replacement a redirect sends calls to, named LIB.so:SYMBOL: loaded
 * for good (a thread may run it after the patch is removed) and checked
 * to be a function, for `fhook patch` started with the program and for
 * `fhook patch -p` alike.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <fhook/livepatch.h>

#include "lp.h"

struct exec_lookup {
	unsigned long addr;
	bool found, exec;
};

static int exec_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct exec_lookup *l = arg;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || l->addr < start || l->addr >= start + ph->p_memsz)
			continue;
		l->found = true;
		l->exec = ph->p_flags & PF_X;
		return 1;
	}
	return 0;
}

/*
 * Is @sym, found as @name, a function?  Calls are redirected to it: a
 * variable there would be executed as code (a crash, or worse, whatever
 * its bytes are).  It must be typed STT_FUNC or STT_GNU_IFUNC (dlsym has
 * then resolved the IFUNC) and lie in an executable segment.
 */
static bool is_function(struct fhook_lp *lp, const char *lib, const char *name, void *sym)
{
	struct exec_lookup l = { .addr = (unsigned long)sym };
	const ElfW(Sym) *es = NULL;
	Dl_info di;
	int type;

	/*
	 * The symbol that covers the address: @name's own, or for an IFUNC
	 * the implementation dlsym resolved it to (a function, or a local
	 * one the dynamic symbol table does not have: then the segment says).
	 */
	if (dladdr1(sym, &di, (void **)&es, RTLD_DL_SYMENT) && es)
		type = ELF64_ST_TYPE(es->st_info);
	else
		type = STT_FUNC;
	if (type != STT_FUNC && type != STT_GNU_IFUNC) {
		fhook_lp_err(lp, "%s: '%s' is %s, not a function: --with needs a function of "
			     "the target's prototype", lib, name,
			     type == STT_OBJECT ? "a variable (STT_OBJECT)" :
			     type == STT_TLS ? "a thread-local variable (STT_TLS)" :
			     "no function (its symbol type is not STT_FUNC)");
		return false;
	}
	dl_iterate_phdr(exec_cb, &l);
	if (!l.found || !l.exec) {
		fhook_lp_err(lp, "%s: '%s' is not in an executable segment", lib, name);
		return false;
	}
	return true;
}

void *fhook_lp_replacement(struct fhook_lp *lp, const char *with)
{
	char *lib = strdup(with), *colon;
	void *h, *sym = NULL;

	if (!lib)
		return NULL;
	colon = strrchr(lib, ':');
	if (!colon || colon == lib || !colon[1]) {
		fhook_lp_err(lp, "--with needs LIB.so:SYMBOL, got '%s'", with);
		goto out;
	}
	*colon = 0;
	/* nodelete: the replacement stays mapped for as long as a thread might run it */
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		fhook_lp_err(lp, "cannot load %s: %s", lib, dlerror());
		goto out;
	}
	sym = dlsym(h, colon + 1);
	if (!sym)
		fhook_lp_err(lp, "%s has no symbol '%s'", lib, colon + 1);
	else if (!is_function(lp, lib, colon + 1, sym))
		sym = NULL;
out:
	free(lib);
	return sym;
}

