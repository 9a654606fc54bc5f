/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between the parts of fhook_redirect.ko; not part of the API. */
#ifndef _FHOOK_INTERNAL_H
#define _FHOOK_INTERNAL_H

#include <linux/mutex.h>
#include "fhook_redirect.h"

/* Serialises registration, unregistration and the debugfs view. */
extern struct mutex fhook_mutex;
extern struct list_head fhook_redirects;
extern struct list_head fhook_probes;

int fhook_sym_extent(unsigned long addr, unsigned long *offset,
		     unsigned long *size);
int fhook_resolve_func(const char *name, unsigned long *start,
		       unsigned long *size);
unsigned long fhook_ftrace_site(unsigned long func);
int fhook_find_calls(const char *caller, unsigned long start,
		     unsigned long size, const char *target,
		     unsigned long target_addr, unsigned long site,
		     unsigned long *sites, unsigned int max_sites);

#endif /* _FHOOK_INTERNAL_H */
