// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parts of the arch contract aarch64 does not have yet, each
 * answering as an architecture without the feature must, so that generic
 * code takes its general path:
 *
 * - direct trampolines (the livepatch redirect runs its ftrace handler);
 * - the handler scans that let a trampoline skip the vector registers
 *   (every handler is taken to read and change anything).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct fhook_direct *fhook_direct_get(unsigned long site_ret,
				      const struct fhook_direct_route *skip, unsigned int nr_skip,
				      const struct fhook_direct_route *routes,
				      unsigned int nr_routes)
{
	(void)site_ret;
	(void)skip;
	(void)nr_skip;
	(void)routes;
	(void)nr_routes;
	return NULL;
}

void *fhook_direct_code(const struct fhook_direct *d)
{
	(void)d;
	return NULL;
}

unsigned long fhook_direct_count(const struct fhook_direct *d, unsigned int i)
{
	(void)d;
	(void)i;
	return 0;
}

void fhook_direct_retire(struct fhook_direct *d)
{
	(void)d;
}

void fhook_arch_handler_scan(void *func)
{
	(void)func;
}

void fhook_arch_handler_scan_decode(void *func)
{
	(void)func;
}

size_t fhook_arch_handler_vec_free(void *func, enum fhook_fregs_kind kind)
{
	(void)func;
	(void)kind;
	return 0;
}

bool fhook_arch_handler_reads_fregs(void *func)
{
	(void)func;
	return true;
}

bool fhook_arch_handler_reads_args(void *func, unsigned int args)
{
	(void)func;
	(void)args;
	return true;
}

bool fhook_arch_handler_unprove(unsigned long addr)
{
	(void)addr;
	return false;
}
