// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapstone, opened with dlopen() the first time an instruction is
 * decoded, not linked: relocating its tables costs hundreds of page
 * faults, and every process that loads libfhook would pay them even
 * though only kprobes, redirects by caller and the handler scan use it.
 * Also built into the assembler front end (cli/as_vecproof.c), which
 * decodes only objects that hold a candidate.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "cs.h"
#include "util/libc.h"

#define cs fhook_cs

struct fhook_cs fhook_cs;
bool fhook_cs_quiet;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static bool cs_ok;

static void cs_load(void)
{
	/*
	 * never closed: a second check must not pay the load again; libc's
	 * dlopen, not the program's interposed one: a decoder loaded is no
	 * event for the ops, and this may run under ftrace_lock
	 */
	void *h = fhook_libc_dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		if (fhook_cs_quiet)
			return;
		fprintf(stderr, "fhook: cannot load libcapstone.so.4 (%s); instructions "
			"cannot be decoded\n", dlerror());
		return;
	}
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&cs.insn_group = dlsym(h, "cs_insn_group");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	__atomic_store_n(&cs_ok, cs.open && cs.option && cs.malloc && cs.disasm_iter &&
			 cs.insn_group && cs.free && cs.close, __ATOMIC_RELEASE);
}

bool fhook_cs_loaded(void)
{
	return __atomic_load_n(&cs_ok, __ATOMIC_ACQUIRE);
}

bool fhook_cs_load(void)
{
	pthread_once(&cs_once, cs_load);
	return cs_ok;
}

int fhook_cs_open(csh *h, cs_insn **insn)
{
	if (!fhook_cs_load())
		return -ENOSYS;
	if (cs.open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -ENOMEM;
	cs.option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	*insn = cs.malloc(*h);
	if (!*insn) {
		cs.close(h);
		return -ENOMEM;
	}
	return 0;
}

void fhook_cs_close(csh *h, cs_insn *insn)
{
	cs.free(insn, 1);
	cs.close(h);
}
