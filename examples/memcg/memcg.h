/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The little of the kernel's memcg and seq_file that the caller-selective
 * redirect module touches, for
 * the user-space example: examples/memcg/memcg.c defines it, the module in
 * examples/caller-redirect/ uses it (the program is linked -rdynamic, as the
 * kernel exports symbols to its modules).
 */
#ifndef EXAMPLES_MEMCG_H
#define EXAMPLES_MEMCG_H

#include <stdio.h>

/* include/linux/memcontrol.h */
enum memcg_memory_event {
	MEMCG_LOW,
	MEMCG_HIGH,
	MEMCG_MAX,
	MEMCG_OOM,
	MEMCG_OOM_KILL,
	MEMCG_NR_MEMORY_EVENTS,
};

typedef struct {
	long counter;
} atomic_long_t;

static inline long atomic_long_read(const atomic_long_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_long_inc(atomic_long_t *v)
{
	__atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

struct mem_cgroup {
	const char *name;
	struct mem_cgroup *parent;
	atomic_long_t memory_events[MEMCG_NR_MEMORY_EVENTS];
	atomic_long_t memory_events_local[MEMCG_NR_MEMORY_EVENTS];
};

/* include/linux/seq_file.h */
struct seq_file {
	FILE *out;
	void *private;
};

void seq_printf(struct seq_file *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
