// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD object of the real-program benchmark: an fprobe with empty
 * entry and exit handlers on every traceable function ("*"), registered
 * before main() and removed at exit.  Built without instrumentation.
 * FHOOK_BENCH_ENTRY_ONLY=1 leaves the exit handler out.
 */
#include <stdio.h>
#include <stdlib.h>

#include <fhook/fprobe.h>

static int on_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	return 0;
}

static void on_exit_(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		     struct ftrace_regs *fregs, void *data)
{
}

static struct fprobe fp = { .entry_handler = on_entry, .exit_handler = on_exit_ };

__attribute__((constructor)) static void bench_fprobe_init(void)
{
	int ret;

	if (getenv("FHOOK_BENCH_ENTRY_ONLY"))
		fp.exit_handler = NULL;
	ret = register_fprobe(&fp, "*", NULL);
	if (ret) {
		fprintf(stderr, "fprobe_all: register_fprobe: %d\n", ret);
		exit(125);
	}
}

__attribute__((destructor)) static void bench_fprobe_exit(void)
{
	if (getenv("FHOOK_BENCH_VERBOSE"))
		fprintf(stderr, "fprobe_all: %lu sites, %lu missed\n",
			fp.ops.nr_sites, fprobe_nmissed(&fp));
	unregister_fprobe(&fp);
}
