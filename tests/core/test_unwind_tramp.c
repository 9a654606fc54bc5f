// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unwinding from inside a handler walks through the trampoline to the
 * traced function and its caller: the per-ops trampolines fhook generates
 * carry unwind information as the static ones do.  Both kinds (xmm0-7
 * saved or not), and the generic trampolines (FHOOK_SLOW_DISPATCH=1 runs
 * this test again through the C dispatcher, test_slow_dispatch.sh).
 */
#define _GNU_SOURCE
#include <unwind.h>

#include <fhook/fhook.h>

#include "../check.h"

static unsigned long frames[64];
static int nframes;

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	if (nframes < 64)
		frames[nframes++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	nframes = 0;
	_Unwind_Backtrace(one_frame, NULL);
}

NOINLINE int traced(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

NOINLINE int caller_fn(int x)
{
	/* not a tail call: its frame stays */
	return traced(x) * 2;
}

static bool found(const char *name)
{
	unsigned long start = kallsyms_lookup_name(name), size = 0, off;
	int i;

	if (!start || !kallsyms_lookup_size_offset(start, &size, &off))
		return false;
	for (i = 0; i < nframes; i++)
		if (frames[i] - 1 - start < size)	/* a return address: the call is before it */
			return true;
	return false;
}

static void walk(unsigned long flags, const char *name)
{
	struct ftrace_ops ops = { .func = handler, .flags = flags };
	char what[96];

	ftrace_set_filter_ip(&ops, (unsigned long)traced, 0, 1);
	register_ftrace_function(&ops);
	CHECK_EQ(caller_fn(3), 8, name);
	snprintf(what, sizeof(what), "%s_through_to_traced", name);
	CHECK(found("traced"), what, "%d frames, none in traced()", nframes);
	snprintf(what, sizeof(what), "%s_through_to_caller", name);
	CHECK(found("caller_fn"), what, "%d frames, none in caller_fn()", nframes);
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

static void case_unwind(void)
{
	walk(0, "sse");
	walk(FHOOK_OPS_FL_GENERAL_REGS_ONLY, "gp");
	walk(FTRACE_OPS_FL_SAVE_REGS, "regs");
}

static const struct check_case cases[] = {
	CHECK_CASE(unwind),
};

int main(void)
{
	return check_run_cases(cases);
}
