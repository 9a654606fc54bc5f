// SPDX-License-Identifier: LGPL-2.1-or-later
/* A program built without the instrumentation flags, linked with libfhook. */
#include <errno.h>
#include <fhook/fhook.h>
#include "../check.h"

static void h(unsigned long ip, unsigned long p, struct ftrace_ops *op, struct ftrace_regs *f)
{
}

int main(void)
{
	struct ftrace_ops ops = { .func = h };
	struct fhook_stats st;

	fhook_get_stats(&st);
	CHECK_EQ(st.nr_sites, 0, "no_sites_found");
	CHECK_EQ(ftrace_set_filter(&ops, (unsigned char *)"*", 1, 1), -EINVAL, "glob_matches_nothing");
	CHECK_EQ(ftrace_set_filter_ip(&ops, (unsigned long)main, 0, 1), -ENOENT, "not_a_site");
	CHECK(kallsyms_lookup_name("main") == (unsigned long)main, "symbols_still_work", "");
	return check_exit();
}
