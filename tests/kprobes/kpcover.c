// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kpcover.so: preloaded into an unmodified program, it puts a kprobe on
 * the entry of every function of the objects named, before main(), and
 * says at exit how each was probed and how many were hit.
 *
 *   KPCOVER_OBJECTS=liblzma,libsqlite3   objects whose path contains one of
 *                                        these; "main": the executable
 *   KPCOVER_OUT=file                     the report (default stderr)
 *   KPCOVER_WHY=1                        a line per function not jumped to
 *   KPCOVER_RET=1                        kretprobes instead (entry + exit)
 *
 * Report: "kpcover: N functions: J jump, T trap, S site, F failed; H
 * hits in C functions; R returns; registered in U us (X us per function)".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fhook/kallsyms.h>
#include <fhook/kprobes.h>

struct cover {
	const char *objects;
	struct kretprobe *rps;
	struct kprobe **kps;
	struct kretprobe **rpp;
	unsigned long *addrs;
	const char **names;
	long *hits;
	long returns;
	size_t nr, cap;
	pid_t pid;			/* forked children report nothing */
	bool ret;
	double us;
};

static struct cover cv;

static bool wanted(const char *object)
{
	const char *p = cv.objects;
	size_t n;

	while (p && *p) {
		n = strcspn(p, ",");
		if (n == 4 && !strncmp(p, "main", 4) && !object)
			return true;
		if (object && n && memmem(object, strlen(object), p, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static int collect(void *data, const struct fhook_symbol *sym)
{
	if (!wanted(sym->object) || !sym->addr)
		return 0;
	if (cv.nr == cv.cap) {
		cv.cap = cv.cap ? 2 * cv.cap : 1024;
		cv.addrs = realloc(cv.addrs, cv.cap * sizeof(*cv.addrs));
		cv.names = realloc(cv.names, cv.cap * sizeof(*cv.names));
		if (!cv.addrs || !cv.names)
			abort();
	}
	cv.addrs[cv.nr] = sym->addr;
	cv.names[cv.nr++] = strdup(sym->name);
	return 0;
}

static int pre(struct kprobe *p, struct pt_regs *regs)
{
	/* each kprobe is the first member of a kretprobe of cv.rps */
	__atomic_add_fetch(&cv.hits[(struct kretprobe *)p - cv.rps], 1, __ATOMIC_RELAXED);
	return 0;
}

static int entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	__atomic_add_fetch(&cv.hits[ri->rp - cv.rps], 1, __ATOMIC_RELAXED);
	return 0;
}

static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	__atomic_add_fetch(&cv.returns, 1, __ATOMIC_RELAXED);
	return 0;
}

/* one address once (aliases share it) */
static void dedup(void)
{
	size_t i, j, k = 0;

	for (i = 0; i < cv.nr; i++) {
		for (j = 0; j < k && cv.addrs[j] != cv.addrs[i]; j++)
			;
		if (j == k) {
			cv.addrs[k] = cv.addrs[i];
			cv.names[k++] = cv.names[i];
		}
	}
	cv.nr = k;
}

__attribute__((constructor)) static void kpcover_init(void)
{
	struct timespec t0, t1;
	size_t i;

	cv.objects = getenv("KPCOVER_OBJECTS");
	cv.ret = getenv("KPCOVER_RET") && *getenv("KPCOVER_RET") == '1';
	if (!cv.objects)
		return;
	fhook_kallsyms_for_each(collect, NULL);
	dedup();
	if (!cv.nr)
		return;
	/* every kprobe inside a kretprobe, so one array serves both */
	cv.rps = calloc(cv.nr, sizeof(*cv.rps));
	cv.kps = calloc(cv.nr, sizeof(*cv.kps));
	cv.rpp = calloc(cv.nr, sizeof(*cv.rpp));
	cv.hits = calloc(cv.nr, sizeof(*cv.hits));
	for (i = 0; i < cv.nr; i++) {
		cv.rps[i].kp.addr = (kprobe_opcode_t *)cv.addrs[i];
		if (cv.ret) {
			cv.rps[i].entry_handler = entry;
			cv.rps[i].handler = ret_handler;
		} else {
			cv.rps[i].kp.pre_handler = pre;
		}
		cv.kps[i] = &cv.rps[i].kp;
		cv.rpp[i] = &cv.rps[i];
	}
	cv.pid = getpid();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (cv.ret) {
		/* one at a time: what cannot be probed is counted, not fatal */
		for (i = 0; i < cv.nr; i++)
			register_kretprobe(cv.rpp[i]);
	} else if (register_kprobes(cv.kps, (int)cv.nr)) {
		for (i = 0; i < cv.nr; i++)
			register_kprobe(cv.kps[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cv.us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
}

__attribute__((destructor)) static void kpcover_fini(void)
{
	const char *out = getenv("KPCOVER_OUT");
	long n[4] = { 0 }, hits = 0, hit_funcs = 0;
	char why[128];
	FILE *f;
	size_t i;

	if (!cv.nr || getpid() != cv.pid)
		return;
	f = out ? fopen(out, "a") : stderr;
	if (!f)
		f = stderr;
	for (i = 0; i < cv.nr; i++) {
		enum kprobe_method m = kprobe_method(cv.kps[i], why, sizeof(why));

		n[m]++;
		hits += cv.hits[i];
		hit_funcs += cv.hits[i] > 0;
		if (getenv("KPCOVER_WHY") && m != KPROBE_METHOD_JUMP)
			fprintf(f, "kpcover: %s %s%s%s\n", cv.names[i], kprobe_method_name(m),
				why[0] ? ": " : "", why);
	}
	fprintf(f, "kpcover: %zu functions: %ld jump, %ld trap, %ld site, %ld failed; "
		"%ld hits in %ld functions; %ld returns; registered in %.0f us "
		"(%.2f us per function)\n", cv.nr, n[KPROBE_METHOD_JUMP], n[KPROBE_METHOD_TRAP],
		n[KPROBE_METHOD_SITE], n[KPROBE_METHOD_NONE], hits, hit_funcs, cv.returns,
		cv.us, cv.us / (double)cv.nr);
	if (f != stderr)
		fclose(f);
}
