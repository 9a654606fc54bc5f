// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gcc's pads, five 1-byte nops, become one 5-byte nop in every object of
 * the process, with every thread stopped: a thread between two of those
 * nops is first moved past the rest of the pad.  The threads are stopped
 * on a thread of ours (stop_world()), which unblocks SIGTRAP too.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fhook/internal/elf.h>
#include <fhook/internal/site.h>

#include "att.h"

void att_free_pads(struct cli_attach *a)
{
	int i;

	for (i = 0; i < a->nr_pads; i++) {
		free(a->pads[i].addrs);
		free(a->pads[i].calls);
		free(a->pads[i].orig);
		free(a->pads[i].now);
		free(a->pads[i].split);
	}
	free(a->pads);
	a->pads = NULL;
	a->nr_pads = 0;
}

/*
 * What @pd's pages become, from their bytes @cur (@pd->orig is set to
 * them): each pad the 5-byte nop, and the pads that were several
 * instructions listed.  The classifier libfhook and `fhook prepare` use.
 */
static int plan_pads(struct att_pads *pd, const unsigned char *cur)
{
	size_t len = pd->hi - pd->lo, k, cap = 0;

	free(pd->orig);
	free(pd->split);
	pd->split = NULL;
	pd->nr_split = 0;
	pd->orig = malloc(2 * len);
	if (!pd->orig)
		return -ENOMEM;
	pd->img = pd->orig + len;
	memcpy(pd->orig, cur, len);
	memcpy(pd->img, cur, len);
	for (k = 0; k < pd->nr; k++) {
		unsigned long s = pd->addrs[k], avail = pd->hi - s;
		struct fhook_site_nop nop;

		if (fhook_site_classify(pd->img + (s - pd->lo), avail < FHOOK_SITE_BYTES_MAX ?
					avail : FHOOK_SITE_BYTES_MAX, false, &nop) ||
		    !nop.split || !nop.len)
			continue;
		memcpy(pd->img + (s - pd->lo), nop.bytes, nop.len);
		if (pd->nr_split == cap) {
			struct att_split *n;

			cap = cap ? cap * 2 : 1024;
			n = realloc(pd->split, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			pd->split = n;
		}
		pd->split[pd->nr_split].addr = s;
		pd->split[pd->nr_split++].len = nop.len;
	}
	return 0;
}

static int cmp_split(const void *x, const void *y)
{
	const struct att_split *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int cmp_addr(const void *x, const void *y)
{
	unsigned long a = *(const unsigned long *)x, b = *(const unsigned long *)y;

	return a < b ? -1 : a > b;
}

/* Read @pd's pages through @fd (/proc/PID/mem) and plan them. */
static int read_and_plan(struct att_pads *pd, int fd)
{
	size_t len = pd->hi - pd->lo;
	unsigned char *cur = malloc(len);
	int ret = -EFAULT;

	if (cur && pread(fd, cur, len, pd->lo) == (ssize_t)len)
		ret = plan_pads(pd, cur);
	else if (!cur)
		ret = -ENOMEM;
	if (!ret) {
		/* (none when an attach killed before loading libfhook rewrote them all) */
		if (pd->nr_split)
			qsort(pd->split, pd->nr_split, sizeof(*pd->split), cmp_split);
		/* the buffer itself, already touched, is the one read into later */
		pd->now = cur;
		return 0;
	}
	free(cur);
	return ret;
}

/* The split pad that @ip is inside of (past its first byte), or NULL. */
static const struct att_split *inside_split(const struct att_pads *pd, unsigned long ip)
{
	size_t lo = 0, hi = pd->nr_split;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (pd->split[m].addr < ip)
			lo = m + 1;
		else
			hi = m;
	}
	/* the last pad starting below ip */
	if (!lo || ip >= pd->split[lo - 1].addr + pd->split[lo - 1].len)
		return NULL;
	return &pd->split[lo - 1];
}

/* The sites of every object, from its file (threads still running). */
int att_collect_pads(struct cli_attach *a)
{
	int i, j;

	for (i = 0; i < a->nr_maps; i++) {
		const struct att_map *m = &a->maps[i];
		struct fhook_elf_scan scan;
		struct fhook_elf_sites sites;
		struct att_pads *p;
		unsigned long bias, k;
		unsigned char eh[18];
		int efd;

		/* each object once, from its first mapping */
		if (!m->path || m->off)
			continue;
		for (j = 0; j < i; j++)
			if (a->maps[j].path && !strcmp(a->maps[j].path, m->path))
				break;
		if (j < i)
			continue;
		if (fhook_elf_scan(m->path, &scan) || !scan.nr_sections || scan.prepared)
			continue;
		if (fhook_elf_read_sites(m->path, &sites) || !sites.nr)
			continue;
		/* link-time address -> run time: ET_DYN objects start at 0 here */
		bias = m->start;
		efd = open(m->path, O_RDONLY | O_CLOEXEC);
		if (efd >= 0) {
			if (pread(efd, eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
			    (eh[16] | eh[17] << 8) == ET_EXEC)
				bias = 0;
			close(efd);
		}
		p = realloc(a->pads, (a->nr_pads + 1) * sizeof(*p));
		if (!p) {
			free(sites.addrs);
			free(sites.from_mcount);
			return -ENOMEM;
		}
		a->pads = p;
		p = &a->pads[a->nr_pads++];
		p->addrs = sites.addrs;
		p->nr = 0;
		p->calls = NULL;
		p->nr_calls = 0;
		p->lo = ~0UL;
		p->hi = 0;
		for (k = 0; k < sites.nr; k++) {
			unsigned long s = sites.addrs[k] + bias;

			if (sites.from_mcount[k]) {
				/* a call, not a pad */
				if (!p->calls)
					p->calls = malloc(sites.nr * sizeof(*p->calls));
				if (p->calls)
					p->calls[p->nr_calls++] = s;
				continue;
			}
			p->addrs[p->nr++] = s;
			p->lo = s < p->lo ? s : p->lo;
			p->hi = s + 5 > p->hi ? s + 5 : p->hi;
		}
		free(sites.from_mcount);
		/* in address order: a page's sites are found together (precow_pads()) */
		qsort(p->addrs, p->nr, sizeof(*p->addrs), cmp_addr);
		if (p->calls)
			qsort(p->calls, p->nr_calls, sizeof(*p->calls), cmp_addr);
		p->lo &= ~4095UL;
		p->hi = (p->hi + 4095) & ~4095UL;
		p->orig = NULL;
		p->now = NULL;
		p->split = NULL;
		p->nr_split = 0;
		if (!p->nr) {
			free(p->addrs);
			free(p->calls);
			a->nr_pads--;
		}
	}
	return 0;
}

/* The first address from @c on that is in none of the 5-byte sites @s (sorted, from *@j on). */
static unsigned long past_sites(const unsigned long *s, size_t n, size_t *j, unsigned long c)
{
	size_t i;

	while (*j < n && s[*j] + 5 <= c)
		(*j)++;
	for (i = *j; i < n && s[i] <= c; i++)
		if (c < s[i] + 5)
			c = s[i] + 5;
	return c;
}

/*
 * Each page that the rewrite will change is made the process's own copy
 * now, while its threads run, by writing back one byte of it as it is:
 * the copy (a page fault in the process, hundreds for a large program)
 * is then not made with every thread stopped.  The byte is one of no
 * site: the only text that anything (a libfhook another attach is
 * loading meanwhile) may be changing is a site's, and the process has
 * no debugger (checked first).  The bytes a thread executes stay what
 * they were.
 */
static void precow_pads(const struct att_pads *pd, int fd)
{
	size_t len = pd->hi - pd->lo, k, j = 0, jc = 0;

	for (k = 0; k < len; k += 4096) {
		unsigned long c = pd->lo + k, c0;
		unsigned char b;

		if (!memcmp(pd->orig + k, pd->img + k, 4096))
			continue;
		do {
			c0 = c;
			c = past_sites(pd->addrs, pd->nr, &j, c);
			c = past_sites(pd->calls, pd->nr_calls, &jc, c);
		} while (c != c0);
		/* (a page left out is copied later, in the stopped window) */
		if (c < pd->lo + k + 4096 && pread(fd, &b, 1, c) == 1 && pwrite(fd, &b, 1, c) != 1)
			break;
	}
}

/*
 * The pads' pages planned with the threads running.  Reading another
 * process's memory needs the permission the attach checks later: without
 * it nothing is planned here (and the attach says why it is refused).
 */
void att_plan_all_pads(struct cli_attach *a)
{
	char mem_path[64];
	int i, fd;

	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", a->pid);
	fd = open(mem_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < a->nr_pads; i++) {
		if (read_and_plan(&a->pads[i], fd))
			break;
		precow_pads(&a->pads[i], fd);
	}
	close(fd);
}

/*
 * Where a thread at @pc, between two nops of a pad of @pd, is to go on:
 * the pad's end (the nops left only move the pc); 0 when @pc is in none.
 */
static unsigned long past_pad(const struct att_pads *pd, unsigned long pc)
{
	const struct att_split *sp = inside_split(pd, pc);

	return sp && pc != sp->addr ? sp->addr + sp->len : 0;
}

/*
 * A thread running a signal handler goes back, by its signal frame, to
 * where the signal interrupted it, which may be between two nops of a pad:
 * the pcs saved in its frames are noted, to be moved as its own pc is
 * (att_arch_find_frames()).
 */
static void find_frames(struct cli_attach *a, struct att_thread *t)
{
	att_arch_find_frames(a, t);
}

/*
 * gcc's pads, five 1-byte nops, become one 5-byte nop in every object of
 * the process, with every thread stopped: a thread between two of those
 * nops is first moved past the rest of the pad.  What the pages become was
 * worked out before the threads were stopped (plan_pads()); here they are
 * read again, and planned again only if they changed meanwhile, and each
 * run of changed pages is one write.
 */
int att_rewrite_pads(struct cli_attach *a)
{
	char mem_path[64];
	int i, j, fd, ret = 0;

	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", a->pid);
	fd = open(mem_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (j = 0; j < a->nr_th; j++)
		if (!a->th[j].gone)
			find_frames(a, &a->th[j]);
	for (i = 0; i < a->nr_pads && !ret; i++) {
		struct att_pads *pd = &a->pads[i];
		unsigned long len = pd->hi - pd->lo, k, run;
		unsigned char *now;

		if (!pd->now)
			pd->now = malloc(len);	/* not planned beforehand (no permission then) */
		now = pd->now;
		if (!now || pread(fd, now, len, pd->lo) != (ssize_t)len)
			continue;
		if (!pd->orig || memcmp(now, pd->orig, len)) {
			ret = plan_pads(pd, now);
			if (ret)
				break;
			if (pd->nr_split)
				qsort(pd->split, pd->nr_split, sizeof(*pd->split), cmp_split);
		}
		/*
		 * Nobody may be between two of these nops when they become
		 * one.  What is left of a pad is nops, whose only effect is to
		 * move the pc: a thread inside gets its pc at the pad's end,
		 * as if it had run them (single-stepping it there cost 50-90
		 * us a step, up to 20 steps in a process of 8 busy threads,
		 * with every thread stopped).
		 */
		for (j = 0; j < a->nr_th; j++) {
			struct att_thread *t = &a->th[j];
			unsigned long pc;
			int f;

			for (f = 0; !t->gone && f < t->nr_frames; f++)
				if ((pc = past_pad(pd, t->frame_pc[f])) &&
				    !att_mem_write(a, t->frame_at[f], &pc, sizeof(pc)))
					a->pads_moved++;
			if (t->gone || !(pc = past_pad(pd, att_regs_pc(&t->regs))))
				continue;
			att_regs_set_pc(&t->regs, pc);
			if (att_arch_set_regs(t->tid, &t->regs))
				t->gone = true;		/* killed meanwhile */
			else
				a->pads_moved++;
		}
		/* each run of changed pages written back at once */
		for (k = 0; k < len && !ret; k += run) {
			run = 4096;
			if (!memcmp(pd->orig + k, pd->img + k, 4096))
				continue;
			while (k + run < len && memcmp(pd->orig + k + run, pd->img + k + run, 4096))
				run += 4096;
			if (pwrite(fd, pd->img + k, run, pd->lo + k) != (ssize_t)run)
				ret = -errno;
		}
	}
	close(fd);
	return ret;
}

/*
 * A thread that meets fhook's int3 with SIGTRAP blocked is killed by the
 * kernel.  libfhook keeps SIGTRAP out of the masks of the programs it
 * starts (its pthread_sigmask); a loaded libfhook cannot, so the masks are
 * fixed here, the one change of a thread's state that attaching makes.
 */
static void unblock_sigtrap(struct cli_attach *a)
{
	unsigned long mask;
	int i;

	for (i = 0; i < a->nr_th; i++) {
		if (a->th[i].gone)
			continue;
		a->world_threads++;
		if (!ptrace(PTRACE_GETSIGMASK, a->th[i].tid, (void *)sizeof(mask), &mask) &&
		    (mask & 1UL << (SIGTRAP - 1))) {
			mask &= ~(1UL << (SIGTRAP - 1));
			if (!ptrace(PTRACE_SETSIGMASK, a->th[i].tid, (void *)sizeof(mask), &mask))
				fprintf(stderr, "fhook: %s: note: thread %d blocked SIGTRAP; it is "
					"unblocked (fhook's int3 would kill it)\n", a->cmd,
					a->th[i].tid);
		}
	}
}

/*
 * What needs every thread stopped (the pads, the signal masks) is done on
 * a thread of ours that then exits: a tracer's exit lets go of every
 * thread it traced at once (the kernel's exit_ptrace()), where
 * PTRACE_DETACHing them one by one let the first one released take our
 * CPU while the others stayed stopped (3 to 14 ms on a busy machine).
 */
static void *stop_world(void *arg)
{
	struct cli_attach *a = arg;
	const struct att_thread *pick;
	struct fhook_sched_attr old;
	double t0 = att_now_ms(), t1 = t0;
	struct rusage ru0 = { 0 }, ru1;
	int ret;

	a->world_tid = (pid_t)syscall(SYS_gettid);
	/* every thread of the process waits for this one: it takes the CPU first ... */
	fhook_boost_rt(0, &old);
	ret = att_stop_all(a);
	/* ... and, once they are stopped, keeps it for the work (a slice of the default length) */
	if (sched_getscheduler(0) != SCHED_FIFO)
		fhook_set_slice(0);
	if (!ret)
		ret = att_read_maps(a);
	if (!ret) {
		/* FHOOK_ATTACH_VERBOSE: every thread's verdict */
		pick = att_pick_safe(a);
		a->preferred = pick ? pick->tid : 0;
		unblock_sigtrap(a);
		t1 = att_now_ms();
		/* the faults (ours and the process's copies of its pages) are this thread's */
		if (att_verbose())
			getrusage(RUSAGE_THREAD, &ru0);
		if (!att_object_named(a, "libfhook.so") && a->dlopen_fn) {
			ret = att_rewrite_pads(a);
			if (ret)
				fprintf(stderr, "fhook: %s: cannot rewrite the pads of process %d: "
					"%s\n", a->cmd, a->pid, strerror(-ret));
			a->pads_done = !ret;
		}
	}
	a->world_ms = att_now_ms() - t0;
	a->world_ret = ret;
	if (att_verbose() && !ret) {
		getrusage(RUSAGE_THREAD, &ru1);
		fprintf(stderr, "fhook: %s: stopping %d threads took %.2f ms, the pads %.2f ms "
			"(%ld page faults; %d threads moved past the rest of a pad)\n", a->cmd,
			a->world_threads, t1 - t0, att_now_ms() - t1, ru1.ru_minflt - ru0.ru_minflt,
			a->pads_moved);
	}
	return NULL;
}

/* Run stop_world() and wait until its thread is gone, and every thread let go with it. */
int att_world_stop(struct cli_attach *a)
{
	pthread_t th;
	int i;

	if (pthread_create(&th, NULL, stop_world, a))
		return -EAGAIN;
	pthread_join(th, NULL);
	/*
	 * Joined once the thread's stack is free; its tracees go a little
	 * later.  TracerPid names the tracing thread, not its process.
	 */
	for (i = 0; i < a->nr_th; i++) {
		char buf[32];
		int n;

		if (a->th[i].gone)
			continue;
		for (n = 0; n < 2000; n++) {
			if (!att_status_field(a->th[i].tid, "TracerPid", buf, sizeof(buf)) ||
			    atoi(buf) != a->world_tid)
				break;
			att_sleep_ms(0.05);
		}
		a->th[i].gone = true;
	}
	a->nr_th = 0;
	return a->world_ret;
}
