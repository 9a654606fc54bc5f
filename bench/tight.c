// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tight loop of `make bench`: N calls of a tiny function, under one
 * hook mode, timed inside the program (the loop only, no start-up).
 *
 *   tight MODE N
 *
 * Built several ways from this one file (bench/run.sh):
 *   plain        no instrumentation                      MODE run | direct
 *   pad          -fpatchable-function-entry=5, no libfhook   MODE run
 *   fhook        pad + libfhook (-DTIGHT_FHOOK)          MODE run | nop | empty | empty-gp |
 *                redirect-hit | redirect-miss | inject-hit | inject-miss |
 *                fprobe-entry | fprobe-both | fprobe-args | direct |
 *                ipmodify-hit | ipmodify-miss | ipmodify-args-hit | ipmodify-args-miss
 *   pg           -pg (for `uftrace record`)              MODE run
 *   cyg          -finstrument-functions, empty hooks     MODE run
 *   lttng        a tracepoint in tiny() (-DTIGHT_LTTNG)  MODE run
 *
 * The N calls are made in CHUNKS rounds of N / CHUNKS; prints "NS ns/call"
 * for the fastest round (the least disturbed by other load on a shared
 * machine) and a checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TIGHT_FHOOK
#include <fhook/fhook.h>
#include <fhook/fprobe.h>
#include <fhook/livepatch.h>
#include <fhook/kallsyms.h>
#include <stdbool.h>
#include <stddef.h>
#endif

#ifdef TIGHT_LTTNG
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tight_tp.h"
#endif

#define CHUNKS	5

#define NOTRACE __attribute__((noinline, no_instrument_function, patchable_function_entry(0, 0)))

__attribute__((noinline)) int tiny(int x)
{
#ifdef TIGHT_LTTNG
	lttng_ust_tracepoint(fhook_bench, tiny, x);
#endif
	__asm__ volatile("");
	return x + 1;
}

/* The replacement of a redirect, called directly by the "direct" mode. */
NOTRACE int tiny_new(int x)
{
	__asm__ volatile("");
	return x + 1;
}

/* Two callers: a redirect or an injection selects loop_a only. */
__attribute__((noinline)) long loop_a(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += tiny((int)i);
	return s;
}

__attribute__((noinline)) long loop_b(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += tiny((int)i);
	return s;
}

__attribute__((noinline)) long loop_direct(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += tiny_new((int)i);
	return s;
}

#ifdef TIGHT_FHOOK
NOTRACE static void empty(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			  struct ftrace_regs *fregs)
{
}

NOTRACE static int fp_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			    struct ftrace_regs *fregs, void *data)
{
	return 0;
}

NOTRACE static void fp_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			    struct ftrace_regs *fregs, void *data)
{
}

/* handlers that read their arguments: called with them (not bare) */
static unsigned long fp_seen;

NOTRACE static int fp_entry_args(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
				 struct ftrace_regs *fregs, void *data)
{
	fp_seen = (unsigned long)fp ^ ip;
	return 0;
}

NOTRACE static void fp_exit_args(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
				 struct ftrace_regs *fregs, void *data)
{
	fp_seen ^= ip ^ ret_ip;
}

/*
 * The kernel module's redirect by caller (examples/caller-redirect), its
 * handler as it is there: SAVE_REGS, pt_regs through ftrace_get_regs(),
 * the caller's range tested against parent_ip, regs->ip set.  The
 * -args modes are the 6.12 way: no SAVE_REGS, the setter.
 */
struct ftrace_handler {
	unsigned long new_addr;
	struct ftrace_ops ops;
};

struct parent_symbol {
	unsigned long start_addr;
	unsigned long end_addr;
};

static struct parent_symbol g_parent_symbol[1];
static struct ftrace_handler g_handler;

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

NOTRACE static void ipmod_handler(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *fops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	struct ftrace_handler *handler;
	unsigned int i;

	handler = container_of(fops, struct ftrace_handler, ops);
	for (i = 0; i < sizeof(g_parent_symbol) / sizeof(g_parent_symbol[0]); ++i) {
		if (g_parent_symbol[i].start_addr <= parent_ip &&
		    parent_ip < g_parent_symbol[i].end_addr)
#ifdef __x86_64__
			regs->ip = handler->new_addr;	/* as the kernel module writes it */
#else
			instruction_pointer_set(regs, handler->new_addr);
#endif
	}
}

NOTRACE static void ipmod_args_handler(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *fops, struct ftrace_regs *fregs)
{
	struct ftrace_handler *handler;
	unsigned int i;

	handler = container_of(fops, struct ftrace_handler, ops);
	for (i = 0; i < sizeof(g_parent_symbol) / sizeof(g_parent_symbol[0]); ++i) {
		if (g_parent_symbol[i].start_addr <= parent_ip &&
		    parent_ip < g_parent_symbol[i].end_addr)
			ftrace_regs_set_instruction_pointer(fregs, handler->new_addr);
	}
}

static int setup_ipmodify(bool args)
{
	unsigned long size;
	char buf[128], *slash;

	g_parent_symbol[0].start_addr = kallsyms_lookup_name("loop_a");
	if (!g_parent_symbol[0].start_addr || sprint_symbol(buf, g_parent_symbol[0].start_addr) <= 0)
		return -1;
	slash = strchr(buf, '/');
	if (!slash || sscanf(slash + 1, "%lx", &size) != 1)
		return -1;
	g_parent_symbol[0].end_addr = g_parent_symbol[0].start_addr + size;
	g_handler.new_addr = (unsigned long)tiny_new;
	g_handler.ops.func = args ? ipmod_args_handler : ipmod_handler;
	g_handler.ops.flags = FTRACE_OPS_FL_DYNAMIC | FTRACE_OPS_FL_IPMODIFY;
	if (!args)
		g_handler.ops.flags |= FTRACE_OPS_FL_SAVE_REGS;
	if (ftrace_set_filter_ip(&g_handler.ops, kallsyms_lookup_name("tiny"), 0, 0))
		return -1;
	return register_ftrace_function(&g_handler.ops);
}

static struct ftrace_ops ops = { .func = empty };
/* the same handler, declared to leave the vector registers alone */
static struct ftrace_ops ops_gp = { .func = empty, .flags = FHOOK_OPS_FL_GENERAL_REGS_ONLY };
static struct fprobe fp;

static int setup(const char *mode)
{
	const char *sym = "tiny";
	struct fhook_lp *lp;

	if (!strcmp(mode, "empty") || !strcmp(mode, "empty-gp")) {
		struct ftrace_ops *o = mode[5] ? &ops_gp : &ops;

		if (ftrace_set_filter_ip(o, (unsigned long)tiny, 0, 1))
			return -1;
		return register_ftrace_function(o);
	}
	if (!strncmp(mode, "redirect-", 9) || !strncmp(mode, "inject-", 7)) {
		lp = fhook_lp_new("tiny", NULL);
		if (!lp)
			return -1;
		if (mode[0] == 'r' ? fhook_lp_redirect(lp, "loop_a", (void *)tiny_new) :
				     fhook_lp_fail(lp, "loop_a", 0))
			return -1;
		return fhook_lp_apply(lp);
	}
	if (!strncmp(mode, "ipmodify-", 9))
		return setup_ipmodify(!strncmp(mode, "ipmodify-args-", 14));
	if (!strncmp(mode, "fprobe-", 7)) {
		fp.entry_handler = fp_entry;
		if (!strcmp(mode, "fprobe-args")) {
			fp.entry_handler = fp_entry_args;
			fp.exit_handler = fp_exit_args;
		} else if (!strncmp(mode, "fprobe-both", 11)) {
			fp.exit_handler = fp_exit;
		}
		return register_fprobe_syms(&fp, &sym, 1);
	}
	return 0;
}
#endif

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "run";
	long n = argc > 2 ? atol(argv[2]) : 10000000, s = 0, c = n / CHUNKS;
	struct timespec t0, t1;
	double ns, best = 0;
	int r;

#ifdef TIGHT_FHOOK
	if (setup(mode)) {
		fprintf(stderr, "tight: cannot set up mode %s\n", mode);
		return 1;
	}
#endif
	for (r = 0; r < CHUNKS; r++) {
		if (r == CHUNKS - 1)
			c = n - c * (CHUNKS - 1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!strcmp(mode, "direct"))
			s += loop_direct(c);
		else if (strstr(mode, "-miss"))
			s += loop_b(c);
		else
			s += loop_a(c);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (c ? c : 1);
		if (!r || ns < best)
			best = ns;
	}
	printf("%.3f ns/call %ld\n", best, s);
	return 0;
}
