// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An fprobe on a glob covers a library opened with dlopen() after it was
 * registered, from the moment dlopen() returns; the library's sites leave
 * the probe at dlclose(); opened again at another address, it is covered
 * again.  Then two threads open, call and close it concurrently: every
 * call made between a thread's dlopen() and dlclose() is seen.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <fhook/fhook.h>
#include <fhook/fprobe.h>

#include "../check.h"

#define ROUNDS	300

static __thread volatile long my_entries;
static atomic_long entries;

static int on_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *regs, void *data)
{
	my_entries++;
	atomic_fetch_add(&entries, 1);
	return 0;
}

static struct fprobe fp = { .entry_handler = on_entry };
static volatile int sink;
static char lib[PATH_MAX], filler[PATH_MAX];

/* In the program: the glob matches it when the probe is registered. */
NOINLINE int libfunc_main(int x)
{
	__asm__ volatile("");
	return x + 1;
}

NOINLINE int other_main(int x)
{
	__asm__ volatile("");
	return x + 2;
}

/* Open, call libfunc_a (which calls libfunc_b), close: the entries seen. */
static long one_round(void **addr)
{
	int (*fn)(int);
	long before;
	void *h;

	h = dlopen(lib, RTLD_NOW);
	if (!h)
		return -1;
	fn = (int (*)(int))dlsym(h, "libfunc_a");
	if (addr)
		*addr = (void *)fn;
	before = my_entries;
	if (!fn || fn(4) != 13) {
		dlclose(h);
		return -2;
	}
	before = my_entries - before;
	dlclose(h);
	return before;
}

static void *worker(void *arg)
{
	long bad = 0;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		long r = one_round(NULL);

		if (r != 2) {
			if (!bad)
				printf("# round %d: %ld entries\n", i, r);
			bad++;
		}
	}
	return (void *)bad;
}

int main(void)
{
	void *first = NULL, *again = NULL, *hf;
	pthread_t t[2];
	long bad = 0, r;
	int i;

	if (readlink("/proc/self/exe", lib, sizeof(lib) - 32) <= 0)
		return 1;
	strcpy(filler, lib);
	strcpy(strrchr(lib, '/'), "/libdlprobe.so");
	strcpy(strrchr(filler, '/'), "/libdlfiller.so");

	CHECK_EQ(register_fprobe(&fp, "libfunc_*", NULL), 0, "register_glob_before_dlopen");
	CHECK_EQ(fp.ops.nr_sites, 1, "sites_before_dlopen");
	my_entries = 0;
	sink = libfunc_main(1);
	CHECK_EQ(my_entries, 1, "program_function_probed");

	r = one_round(&first);
	CHECK_EQ(r, 2, "dlopened_library_probed");
	CHECK_EQ(fp.ops.nr_sites, 1, "library_sites_leave_at_dlclose");
	my_entries = 0;
	sink = other_main(1);
	sink = libfunc_main(1);
	CHECK_EQ(my_entries, 1, "filter_still_only_the_glob");

	/* the same library again, at another address */
	hf = dlopen(filler, RTLD_NOW);
	CHECK(hf != NULL, "dlopen_filler", "%s", dlerror());
	r = one_round(&again);
	CHECK_EQ(r, 2, "reloaded_library_probed");
	CHECK(first != again, "reloaded_elsewhere", "at %p both times", first);
	if (hf)
		dlclose(hf);

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 2; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		bad += (long)ret;
	}
	CHECK(bad == 0, "two_threads_every_call_probed", "%ld of %d calls missed or failed",
	      bad, 2 * ROUNDS);
	CHECK_EQ(fp.ops.nr_sites, 1, "sites_after_threads");
	CHECK_EQ(fprobe_nmissed(&fp), 0, "nmissed");
	CHECK_EQ(unregister_fprobe(&fp), 0, "unregister");
	{
		struct fhook_stats st;

		fhook_get_stats(&st);
		CHECK_EQ(st.nr_enabled, 0, "nothing_left_enabled");
	}
	return check_exit();
}
