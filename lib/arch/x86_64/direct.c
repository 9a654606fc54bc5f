// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Direct trampolines: a caller-selective redirect or fault injection as
 * generated code, the kernel's register_ftrace_direct() with the
 * parent_ip test of livepatch's handler compiled in.
 *
 * A site that only one such ops uses jumps from its stub to code made for
 * that ops.  It compares the caller's return address with each range, in
 * order, and then either returns into the function's body (the original),
 * or drops the site's return address and jumps to the replacement, or
 * returns the injected value to the caller.  It calls no handler and
 * saves nothing: it uses %r11 (scratch at a function's entry) and the
 * flags only, so every argument register, %rax (the vector count of a
 * varargs call) and %r10 reach the replacement as the caller set them.
 *
 * Calls are counted per route and per cpu: the row is the rseq area's
 * cpu_id_start, which the kernel keeps current for every thread that
 * glibc registered, so each cpu increments its own cache line with a
 * plain `incq` (a thread migrated between reading the row and the
 * increment may race with one other thread on that row: a count can be
 * lost, never a call).  Without rseq the increment is locked.
 *
 * Lifetime: the code reads nothing of the ops, only its own block, which
 * is never unmapped and is reused only for the same function.  It does not
 * count the thread in util/tasks.h's word, so a grace period does not
 * wait for it; instead, once the site no longer leads here and the grace
 * period is over, fhook_direct_retire() points every target at the
 * function's body, and a thread preempted inside the code resumes into
 * the original function.  A thread that already jumped is in the
 * replacement, which is the caller's to keep mapped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define DIRECT_PAGE	4096UL
#define DIRECT_ROWS	64		/* cpus with their own row of counters */

struct direct_data {
	unsigned long range[FHOOK_DIRECT_MAX_SKIP + FHOOK_DIRECT_MAX_ROUTES][2];
	unsigned long target[FHOOK_DIRECT_MAX_ROUTES];
	unsigned long retval[FHOOK_DIRECT_MAX_ROUTES];
	unsigned long counters;		/* the counters page */
};

/* A row: one cache line, a counter per route and one for the other callers. */
_Static_assert((FHOOK_DIRECT_MAX_ROUTES + 1) * 8 <= 64, "a row is one cache line");
_Static_assert(DIRECT_ROWS * 64 == DIRECT_PAGE, "the rows fill the counters page");
_Static_assert(sizeof(struct direct_data) <= DIRECT_PAGE, "the data fits its page");

/* code page, data page, counters page */
struct fhook_direct {
	struct fhook_direct *next;
	unsigned char *code;
	struct direct_data *data;
	unsigned long *counters;
	unsigned int nr_skip, nr_routes;
	unsigned int inject_mask;	/* routes that return a value */
	bool live;			/* got, not yet retired: its data is in use */
	unsigned long site_ret;		/* the function's body */
};

static struct fhook_direct *directs;

extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

struct emit {
	unsigned char *p, *start;
	unsigned long base;		/* the address start will run at */
};

static void emit_bytes(struct emit *e, const void *b, size_t n)
{
	memcpy(e->p, b, n);
	e->p += n;
}

static void emit_u8(struct emit *e, unsigned char c)
{
	*e->p++ = c;
}

static void emit_s32(struct emit *e, int32_t v)
{
	memcpy(e->p, &v, 4);
	e->p += 4;
}

static unsigned long emit_ip(const struct emit *e)
{
	return e->base + (unsigned long)(e->p - e->start);
}

/* a disp32 ending the instruction, RIP-relative to @addr */
static void emit_rip(struct emit *e, unsigned long addr)
{
	emit_s32(e, (int32_t)((long)addr - (long)(emit_ip(e) + 4)));
}

/* jb rel32 to a label not placed yet: returns where to patch */
static unsigned char *emit_jb(struct emit *e)
{
	static const unsigned char jb[] = { 0x0f, 0x82 };
	unsigned char *fix;

	emit_bytes(e, jb, sizeof(jb));
	fix = e->p;
	emit_s32(e, 0);
	return fix;
}

static void patch_rel32(struct emit *e, unsigned char *fix, unsigned char *label)
{
	int32_t d = (int32_t)(label - (fix + 4));

	memcpy(fix, &d, 4);
}

/* if (parent_ip - range.start < range.size) goto (patched later) */
static unsigned char *emit_range(struct emit *e, unsigned long *range)
{
	static const unsigned char load_parent[] = { 0x4c, 0x8b, 0x5c, 0x24, 0x08 };
	static const unsigned char sub[] = { 0x4c, 0x2b, 0x1d };
	static const unsigned char cmp[] = { 0x4c, 0x3b, 0x1d };

	emit_bytes(e, load_parent, sizeof(load_parent));	/* mov 8(%rsp), %r11 */
	emit_bytes(e, sub, sizeof(sub));			/* sub start(%rip), %r11 */
	emit_rip(e, (unsigned long)&range[0]);
	emit_bytes(e, cmp, sizeof(cmp));			/* cmp size(%rip), %r11 */
	emit_rip(e, (unsigned long)&range[1]);
	return emit_jb(e);
}

/* counters[row][@col]++ */
static void emit_count(struct emit *e, struct fhook_direct *d, unsigned int col, bool rseq)
{
	if (rseq) {
		static const unsigned char load_cpu[] = { 0x64, 0x44, 0x8b, 0x1c, 0x25 };
		static const unsigned char row[] = {
			0x41, 0x83, 0xe3, DIRECT_ROWS - 1,	/* and $63, %r11d */
			0x41, 0xc1, 0xe3, 0x06,			/* shl $6, %r11d */
		};
		static const unsigned char add[] = { 0x4c, 0x03, 0x1d };

		emit_bytes(e, load_cpu, sizeof(load_cpu));	/* mov %fs:cpu_id_start, %r11d */
		emit_s32(e, (int32_t)__rseq_offset);
		emit_bytes(e, row, sizeof(row));
		emit_bytes(e, add, sizeof(add));		/* add counters(%rip), %r11 */
		emit_rip(e, (unsigned long)&d->data->counters);
		emit_u8(e, 0x49);				/* incq col*8(%r11) */
		emit_u8(e, 0xff);
		emit_u8(e, 0x43);
		emit_u8(e, (unsigned char)(col * 8));
	} else {
		static const unsigned char lock_inc[] = { 0xf0, 0x48, 0xff, 0x05 };

		emit_bytes(e, lock_inc, sizeof(lock_inc));	/* lock incq row0[col](%rip) */
		emit_rip(e, (unsigned long)&d->counters[col]);
	}
}

static void generate(struct fhook_direct *d)
{
	static const unsigned char drop_ret[] = { 0x48, 0x8d, 0x64, 0x24, 0x08 };
	static const unsigned char load_rax[] = { 0x48, 0x8b, 0x05 };
	static const unsigned char jmp_ind[] = { 0xff, 0x25 };
	unsigned char *skip_fix[FHOOK_DIRECT_MAX_SKIP], *route_fix[FHOOK_DIRECT_MAX_ROUTES];
	struct emit e = { d->code, d->code, (unsigned long)d->code };
	bool rseq = &__rseq_size && &__rseq_offset && __rseq_size >= 8 &&
		    __rseq_offset == (int32_t)__rseq_offset;
	unsigned int i;

	/* (%rsp): the function's body; 8(%rsp): the caller's return address */
	for (i = 0; i < d->nr_skip; i++)
		skip_fix[i] = emit_range(&e, d->data->range[i]);
	for (i = 0; i < d->nr_routes; i++)
		route_fix[i] = emit_range(&e, d->data->range[d->nr_skip + i]);
	/* no route: the original function */
	for (i = 0; i < d->nr_skip; i++)
		patch_rel32(&e, skip_fix[i], e.p);
	emit_count(&e, d, d->nr_routes, rseq);
	emit_u8(&e, 0xc3);					/* ret */
	for (i = 0; i < d->nr_routes; i++) {
		patch_rel32(&e, route_fix[i], e.p);
		emit_count(&e, d, i, rseq);
		emit_bytes(&e, drop_ret, sizeof(drop_ret));	/* lea 8(%rsp), %rsp */
		if (d->inject_mask & (1U << i)) {
			emit_bytes(&e, load_rax, sizeof(load_rax));	/* mov retval(%rip), %rax */
			emit_rip(&e, (unsigned long)&d->data->retval[i]);
		}
		emit_bytes(&e, jmp_ind, sizeof(jmp_ind));	/* jmp *target(%rip) */
		emit_rip(&e, (unsigned long)&d->data->target[i]);
	}
	while (e.p < d->code + DIRECT_PAGE)
		emit_u8(&e, INT3_INSN_OPCODE);
}

static unsigned int inject_mask_of(const struct fhook_direct_route *routes, unsigned int nr)
{
	unsigned int i, mask = 0;

	for (i = 0; i < nr; i++)
		if (!routes[i].target)
			mask |= 1U << i;
	return mask;
}

static void fill_data(struct fhook_direct *d, const struct fhook_direct_route *skip,
		      const struct fhook_direct_route *routes)
{
	unsigned int i;

	for (i = 0; i < d->nr_skip; i++) {
		d->data->range[i][0] = skip[i].start;
		d->data->range[i][1] = skip[i].size;
	}
	for (i = 0; i < d->nr_routes; i++) {
		d->data->range[d->nr_skip + i][0] = routes[i].start;
		d->data->range[d->nr_skip + i][1] = routes[i].size;
		d->data->target[i] = routes[i].target ? routes[i].target :
				     (unsigned long)fhook_just_return;
		d->data->retval[i] = routes[i].retval;
	}
	memset(d->counters, 0, DIRECT_PAGE);
}

/**
 * fhook_direct_get - see lib/arch/arch.h
 */
struct fhook_direct *fhook_direct_get(unsigned long site_ret,
				      const struct fhook_direct_route *skip, unsigned int nr_skip,
				      const struct fhook_direct_route *routes,
				      unsigned int nr_routes)
{
	unsigned int mask = inject_mask_of(routes, nr_routes);
	struct fhook_direct *d;
	unsigned char *p;

	if (nr_skip > FHOOK_DIRECT_MAX_SKIP || !nr_routes || nr_routes > FHOOK_DIRECT_MAX_ROUTES)
		return NULL;
	/*
	 * The same function with the same shape: new data in the same code.
	 * Only the same function's: a thread preempted inside the code long
	 * ago resumes with whatever data it then finds, which must send it
	 * to this function's body or a replacement of this function, never
	 * to another function's.
	 */
	for (d = directs; d; d = d->next)
		if (!d->live && d->site_ret == site_ret && d->nr_skip == nr_skip &&
		    d->nr_routes == nr_routes && d->inject_mask == mask) {
			d->live = true;
			fill_data(d, skip, routes);
			/* the data is complete before a stub can lead here */
			__atomic_thread_fence(__ATOMIC_RELEASE);
			return d;
		}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	p = mmap(NULL, 3 * DIRECT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		free(d);
		return NULL;
	}
	d->live = true;
	d->code = p;
	d->data = (struct direct_data *)(p + DIRECT_PAGE);
	d->counters = (unsigned long *)(p + 2 * DIRECT_PAGE);
	d->data->counters = (unsigned long)d->counters;
	d->nr_skip = nr_skip;
	d->nr_routes = nr_routes;
	d->inject_mask = mask;
	d->site_ret = site_ret;
	fill_data(d, skip, routes);
	generate(d);
	/* written once, then never writable again */
	if (mprotect(p, DIRECT_PAGE, PROT_READ | PROT_EXEC)) {
		munmap(p, 3 * DIRECT_PAGE);
		free(d);
		return NULL;
	}
	d->next = directs;
	directs = d;
	return d;
}

void *fhook_direct_code(const struct fhook_direct *d)
{
	return d->code;
}

/**
 * fhook_direct_count - calls route @i took (@i == nr_routes: no route)
 */
unsigned long fhook_direct_count(const struct fhook_direct *d, unsigned int i)
{
	unsigned long sum = 0;
	unsigned int row;

	for (row = 0; row < DIRECT_ROWS; row++)
		sum += __atomic_load_n(&d->counters[row * 8 + i], __ATOMIC_RELAXED);
	return sum;
}

/**
 * fhook_direct_retire - see lib/arch/arch.h
 */
void fhook_direct_retire(struct fhook_direct *d)
{
	unsigned int i;

	for (i = 0; i < d->nr_routes; i++)
		__atomic_store_n(&d->data->target[i], d->site_ret, __ATOMIC_RELAXED);
	d->live = false;
}
