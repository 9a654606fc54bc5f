// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Does a named caller really call the target?
 *
 * The route test looks at the return address.  A caller that ends with
 * "jmp target" (a tail call, common at -O2) leaves its own caller's return
 * address on the stack, so the target sees parent_ip outside the named
 * caller and the call is not routed.  The arch layer decodes the caller
 * and says where its calls and jumps go; this says what that means.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include <fhook/kallsyms.h>

#include "lp.h"
#include "arch/arch.h"

int fhook_lp_check_caller(struct fhook_lp *lp, const char *caller, char *how, size_t how_len)
{
	unsigned long start, size, off, targets[2] = { lp->addr, lp->site };
	struct fhook_branch_scan scan;
	char dummy[8];
	int ret;

	if (!how) {
		how = dummy;
		how_len = sizeof(dummy);
	}
	*how = 0;
	start = kallsyms_lookup_name(caller);
	if (!start || !kallsyms_lookup_size_offset(start, &size, &off) || !size)
		return -ENOENT;
	ret = fhook_insn_scan_branches(start, size, targets, 2, &scan);
	if (ret)
		return ret;
	if (scan.call_at) {
		snprintf(how, how_len, "calls it at %s+%#lx", caller, scan.call_at - start);
		return 1;
	}
	if (scan.jump_at)
		snprintf(how, how_len, "reaches '%s' with a jump at %s+%#lx (a tail call), "
			 "so the return address is that of its own caller", lp->target, caller,
			 scan.jump_at - start);
	else if (scan.indirect)
		snprintf(how, how_len, "contains no direct call to '%s' (%d indirect calls "
			 "could not be resolved)", lp->target, scan.indirect);
	else
		snprintf(how, how_len, "contains no call to '%s'", lp->target);
	return 0;
}
