// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A probe whose object is unloaded (dlclose) is marked KPROBE_FLAG_GONE,
 * as the kernel marks the probes of a module that goes; unregistering it
 * writes nothing, not even when another library now sits at its address,
 * and a new probe there starts afresh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fhook/kprobes.h>

#include "../check.h"

static long hits;

static int pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}

static void *load(const char *name, int (**fn)(int))
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *h;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	*fn = h ? (int (*)(int))dlsym(h, "gone_fn") : NULL;
	return h;
}

int main(void)
{
	static struct kprobe p = { .pre_handler = pre }, q = { .pre_handler = pre };
	unsigned char before[8], after[8];
	int (*fa)(int), (*fb)(int);
	void *ha, *hb;
	unsigned long addr_a;

	ha = load("kpgone_a.so", &fa);
	CHECK(ha && fa, "load_a", "%s", dlerror());
	if (!ha || !fa)
		return check_exit();
	addr_a = (unsigned long)fa;
	p.addr = (kprobe_opcode_t *)fa;
	CHECK_EQ(register_kprobe(&p), 0, "register");
	CHECK_EQ(fa(5), 16, "probed_result");
	CHECK_EQ(hits, 1, "probed_hit");
	printf("# method %s\n", kprobe_method_name(kprobe_method(&p, NULL, 0)));
	CHECK_EQ(p.flags & KPROBE_FLAG_GONE, 0, "not_gone_while_loaded");

	CHECK_EQ(dlclose(ha), 0, "dlclose_a");
	CHECK(p.flags & KPROBE_FLAG_GONE, "gone_after_dlclose", "flags %#x", p.flags);
	CHECK_EQ(enable_kprobe(&p), -EINVAL, "enable_gone_refused");

	hb = load("kpgone_b.so", &fb);
	CHECK(hb && fb, "load_b", "%s", dlerror());
	if (!hb || !fb)
		return check_exit();
	printf("# b at a's address: %s\n", (unsigned long)fb == addr_a ? "yes" : "no");
	memcpy(before, (void *)fb, sizeof(before));
	CHECK_EQ(fb(5), -2, "b_result");
	unregister_kprobe(&p);
	memcpy(after, (void *)fb, sizeof(after));
	CHECK(!memcmp(before, after, sizeof(before)), "unregister_wrote_nothing",
	      "b's first bytes changed");
	CHECK_EQ(fb(5), -2, "b_result_after_unregister");
	CHECK_EQ(hits, 1, "no_hit_in_b");

	/* a probe at the same address now is b's */
	q.addr = (kprobe_opcode_t *)fb;
	CHECK_EQ(register_kprobe(&q), 0, "register_b");
	CHECK_EQ(fb(9), 2, "b_probed_result");
	CHECK_EQ(hits, 2, "b_probed_hit");
	unregister_kprobe(&q);
	memcpy(after, (void *)fb, sizeof(after));
	CHECK(!memcmp(before, after, sizeof(before)), "b_restored", "b's first bytes differ");
	CHECK_EQ(fb(9), 2, "b_result_at_end");

	/* the gone probe registered again, on b: a probe like any other */
	p.addr = (kprobe_opcode_t *)fb;
	CHECK_EQ(register_kprobe(&p), 0, "gone_probe_registered_again");
	CHECK_EQ(p.flags & KPROBE_FLAG_GONE, 0, "gone_flag_cleared");
	CHECK_EQ(disable_kprobe(&p), 0, "disable_again");
	CHECK_EQ(enable_kprobe(&p), 0, "enable_again");
	CHECK_EQ(fb(9), 2, "b_result_probed_again");
	CHECK_EQ(hits, 3, "b_hit_again");
	unregister_kprobe(&p);
	dlclose(hb);
	return check_exit();
}
