// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_redirect core: symbol resolution, call-site discovery and the
 * debugfs view shared by redirects and probes.
 */
#define pr_fmt(fmt) "fhook: " fmt

#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>

#include "internal.h"

DEFINE_MUTEX(fhook_mutex);
LIST_HEAD(fhook_redirects);
LIST_HEAD(fhook_probes);

typedef unsigned long (*fhook_kln_t)(const char *name);
typedef unsigned long (*fhook_ftrace_location_t)(unsigned long ip);

static fhook_kln_t fhook_kln;

/*
 * The kprobe-per-name fallback is what an IBT-enforcing CPU gets; QEMU's
 * CPUs do not enforce IBT, so the test forces it with this parameter.
 */
static bool kprobe_lookup;
module_param(kprobe_lookup, bool, 0444);
MODULE_PARM_DESC(kprobe_lookup,
		 "resolve every name with a kprobe instead of calling kallsyms_lookup_name");
static fhook_ftrace_location_t fhook_ftrace_location;
static struct dentry *fhook_debugfs;

#define X86_ENDBR64		0xfa1e0ff3U	/* f3 0f 1e fa */
#define X86_CALL_REL32		0xe8
#define X86_CALL_LEN		5
/*
 * Call-depth tracking thunks live in the 16 bytes of padding in front of
 * a function; when enabled, the kernel repoints direct calls there.
 */
#define X86_CALL_PADDING	16
/* Callers bigger than this are not scanned for calls (none is, in practice). */
#define FHOOK_MAX_SCAN		(64 * 1024)

static bool fhook_has_endbr(unsigned long addr)
{
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)))
		return false;
	return insn == X86_ENDBR64;
}

/*
 * With IBT an indirect call must land on an ENDBR.  objtool lists the
 * ENDBR of functions whose address is never taken and the kernel poisons
 * them at boot (whether or not the CPU enforces IBT); calling one of those
 * through a pointer raises #CP on a CPU that enforces it.  So a function
 * found through kallsyms may only be called through a pointer when the
 * CPU does not enforce IBT or the function still starts with ENDBR.
 */
static bool fhook_callable(unsigned long addr)
{
#if defined(CONFIG_X86_KERNEL_IBT) && defined(X86_FEATURE_IBT)
	if (cpu_feature_enabled(X86_FEATURE_IBT))
		return fhook_has_endbr(addr);
#endif
	return true;
}

/**
 * fhook_sym_extent() - offset and size of the symbol around @addr
 * @addr:   kernel text address
 * @offset: receives @addr's offset into its symbol
 * @size:   receives the symbol's size
 *
 * sprint_symbol() is the exported way to reach kallsyms' size
 * information; it prints "name+0xoff/0xsize [module]".
 *
 * Return: 0, or -ENOENT when no symbol covers @addr.
 */
int fhook_sym_extent(unsigned long addr, unsigned long *offset,
		     unsigned long *size)
{
	char buf[KSYM_SYMBOL_LEN];
	char *slash, *plus;

	sprint_symbol(buf, addr);
	slash = strchr(buf, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	plus = strrchr(buf, '+');
	if (!plus)
		return -ENOENT;
	if (sscanf(plus + 1, "%lx", offset) != 1 ||
	    sscanf(slash + 1, "%lx", size) != 1 || !*size)
		return -ENOENT;
	return 0;
}

/*
 * Resolve one name with a throw-away kprobe: the kprobe core looks the
 * name up for us.  On IBT kernels the probe lands after the ENDBR; the
 * symbol's own offset from sprint_symbol() gives the start back.
 */
static unsigned long fhook_kprobe_lookup(const char *name,
					 unsigned long *probe_off)
{
	struct kprobe kp = { .symbol_name = name };
	unsigned long addr, off, size;

	if (register_kprobe(&kp))
		return 0;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	if (fhook_sym_extent(addr, &off, &size))
		return 0;
	if (probe_off)
		*probe_off = off;
	return addr - off;
}

unsigned long fhook_lookup_name(const char *name)
{
	if (!name || !*name)
		return 0;
	if (fhook_kln)
		return fhook_kln(name);
	/*
	 * kallsyms_lookup_name() can not be called on this CPU (sealed
	 * ENDBR under enforced IBT): fall back to one kprobe per name,
	 * which works for every function a kprobe may be put on.
	 */
	return fhook_kprobe_lookup(name, NULL);
}
EXPORT_SYMBOL_GPL(fhook_lookup_name);

/**
 * fhook_resolve_func() - start and size of a function by name
 * @name:  symbol
 * @start: receives its address
 * @size:  receives its size in bytes
 *
 * Return: 0, or -ENOENT (with a message naming @name) when unknown.
 */
int fhook_resolve_func(const char *name, unsigned long *start,
		       unsigned long *size)
{
	unsigned long addr, off;
	int ret;

	addr = fhook_lookup_name(name);
	if (!addr) {
		pr_err("symbol '%s' not found in kallsyms\n", name ? name : "");
		return -ENOENT;
	}
	ret = fhook_sym_extent(addr, &off, size);
	if (ret || off) {
		pr_err("symbol '%s' at %px has no size in kallsyms\n", name,
		       (void *)addr);
		return -ENOENT;
	}
	*start = addr;
	return 0;
}

/**
 * fhook_ftrace_site() - the ftrace patch site of a function
 * @func: the function's first byte
 *
 * The site is where __fentry__ was: @func itself, or @func + 4 behind an
 * ENDBR on IBT kernels.  ftrace_location() knows for sure but is not
 * exported; it is used through kallsyms when it can be called safely,
 * otherwise the ENDBR rule is applied and ftrace_set_filter_ip() later
 * rejects an address that is not a site.
 *
 * Return: the site's address, or 0 when @func is not traceable.
 */
unsigned long fhook_ftrace_site(unsigned long func)
{
	if (fhook_ftrace_location)
		return fhook_ftrace_location(func);
	return fhook_has_endbr(func) ? func + 4 : func;
}

/* Does a call from @insn_addr to @dest reach the target? */
static bool fhook_calls_target(unsigned long dest, unsigned long target,
			       unsigned long site)
{
	if (dest == target || dest == site)
		return true;
	/* A call-depth tracking thunk in the padding right before it. */
	return dest >= target - X86_CALL_PADDING && dest < target;
}

/**
 * fhook_find_calls() - the direct calls to a target inside a caller
 * @caller:      caller's name, for messages
 * @start:       caller's first byte
 * @size:        caller's size
 * @target:      target's name, for messages
 * @target_addr: target's first byte
 * @site:        target's ftrace site
 * @sites:       receives the offsets of up to @max_sites calls
 * @max_sites:   room in @sites
 *
 * The kernel's instruction decoder is not exported to modules, so this
 * looks for "e8 rel32" whose destination is the target.  A false match
 * needs four bytes that happen to encode exactly that displacement; a
 * real call can not be missed.  Only calls matter: a tail jump would
 * leave the caller's caller in parent_ip, and the range test would never
 * see this caller.
 *
 * Return: the number of calls found (>= 1), -EINVAL when there is none
 * (reported), -EFAULT when the text can not be read.
 */
int fhook_find_calls(const char *caller, unsigned long start,
		     unsigned long size, const char *target,
		     unsigned long target_addr, unsigned long site,
		     unsigned long *sites, unsigned int max_sites)
{
	unsigned long i, dest;
	u8 *text;
	s32 rel;
	int found = 0;

	if (size < X86_CALL_LEN)
		goto none;
	if (size > FHOOK_MAX_SCAN) {
		pr_err("caller %s is too big to scan (%lu bytes)\n", caller,
		       size);
		return -EINVAL;
	}
	text = kmalloc(size, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	if (copy_from_kernel_nofault(text, (void *)start, size)) {
		kfree(text);
		pr_err("can not read the text of %s\n", caller);
		return -EFAULT;
	}
	for (i = 0; i + X86_CALL_LEN <= size; i++) {
		if (text[i] != X86_CALL_REL32)
			continue;
		memcpy(&rel, text + i + 1, sizeof(rel));
		dest = start + i + X86_CALL_LEN + (long)rel;
		if (!fhook_calls_target(dest, target_addr, site))
			continue;
		if (found < max_sites)
			sites[found] = i;
		found++;
	}
	kfree(text);
	if (found)
		return found;
none:
	pr_err("caller %s [%px, %px) contains no call to %s: its calls would never be redirected\n",
	       caller, (void *)start, (void *)(start + size), target);
	return -EINVAL;
}

/*
 * kallsyms_lookup_name() is not exported since 5.7.  A kprobe resolves any
 * symbol name, so one is registered on it just to read back its address.
 */
static unsigned long fhook_kln_probe_off;

static int fhook_find_kallsyms(void)
{
	unsigned long addr, loc;

	addr = fhook_kprobe_lookup("kallsyms_lookup_name",
				   &fhook_kln_probe_off);
	if (!addr) {
		pr_err("can not resolve kallsyms_lookup_name through a kprobe\n");
		return -ENOENT;
	}
	if (kprobe_lookup)
		pr_info("kprobe_lookup=1: resolving names with kprobes\n");
	else if (fhook_callable(addr))
		fhook_kln = (fhook_kln_t)addr;
	else
		pr_info("kallsyms_lookup_name is sealed under IBT: resolving names with kprobes\n");

	/* Optional: without it fhook_ftrace_site() falls back to the ENDBR rule. */
	loc = fhook_lookup_name("ftrace_location");
	if (loc && fhook_callable(loc))
		fhook_ftrace_location = (fhook_ftrace_location_t)loc;
	return 0;
}

static int fhook_state_show(struct seq_file *m, void *v)
{
	struct fhook_redirect *rd;
	unsigned int i, j;

	mutex_lock(&fhook_mutex);
	list_for_each_entry(rd, &fhook_redirects, node) {
		seq_printf(m, "redirect %s addr=0x%lx size=0x%lx site=%pS owner=%s passthrough=%ld missed=%ld\n",
			   rd->target, rd->target_addr, rd->target_size,
			   (void *)rd->site,
			   rd->owner ? module_name(rd->owner) : "kernel",
			   atomic_long_read(&rd->passthrough),
			   atomic_long_read(&rd->missed));
		for (i = 0; i < rd->nr_callers; i++) {
			struct fhook_caller *c = &rd->callers[i];

			seq_printf(m, "  caller %s range=[0x%lx,0x%lx) calls=",
				   c->symbol, c->start, c->end);
			for (j = 0; j < c->nr_sites; j++)
				seq_printf(m, "%s+0x%lx", j ? "," : "",
					   c->sites[j]);
			seq_printf(m, " to=%ps hits=%ld\n", c->replacement,
				   atomic_long_read(&c->hits));
		}
	}
#if IS_ENABLED(CONFIG_FPROBE)
	{
		struct fhook_probe *pr;

		list_for_each_entry(pr, &fhook_probes, node) {
			seq_printf(m, "probe %s addr=0x%lx owner=%s other=%ld nmissed=%lu\n",
				   pr->target, pr->target_addr,
				   pr->owner ? module_name(pr->owner) : "kernel",
				   atomic_long_read(&pr->other),
				   pr->fp.nmissed);
			for (i = 0; i < pr->nr_callers; i++) {
				struct fhook_probe_caller *c = &pr->callers[i];

				seq_printf(m, "  caller %s range=[0x%lx,0x%lx) entry=%ld exit=%ld\n",
					   c->symbol, c->start, c->end,
					   atomic_long_read(&c->entries),
					   atomic_long_read(&c->exits));
			}
		}
	}
#endif
	mutex_unlock(&fhook_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(fhook_state);

static int __init fhook_init(void)
{
	int ret;

	ret = fhook_find_kallsyms();
	if (ret)
		return ret;

	/*
	 * debugfs failures are deliberately not fatal (and its API returns
	 * nothing worth checking): the view is a convenience, the redirects
	 * work without it.
	 */
	fhook_debugfs = debugfs_create_dir("fhook", NULL);
	debugfs_create_file("state", 0400, fhook_debugfs, NULL,
			    &fhook_state_fops);
	pr_info("ready (kallsyms_lookup_name: kprobe at +0x%lx, %s; ftrace_location %s)\n",
		fhook_kln_probe_off,
		fhook_kln ? "called directly" : "names resolved by kprobes",
		fhook_ftrace_location ? "used" : "not callable");
	return 0;
}

static void __exit fhook_exit(void)
{
	/* Clients hold a module reference on us, so the lists are empty. */
	debugfs_remove_recursive(fhook_debugfs);
}

module_init(fhook_init);
module_exit(fhook_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook: caller-selective redirection of kernel functions");
