/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A table from code addresses to an architecture's kprobe slots, for the
 * SIGTRAP handler: open addressing, never shrunk, read without a lock.  A
 * full table is copied into one twice its size and the old one is kept (a
 * handler may be reading it); entries are never removed.  Additions are
 * serialized by the caller (the kprobes layer's lock).
 */
#ifndef FHOOK_ARCH_ADDR_TABLE_H
#define FHOOK_ARCH_ADDR_TABLE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

struct fhook_addr_slots {
	size_t mask;
	struct fhook_addr_entry {
		_Atomic unsigned long key;	/* 0: free */
		void *val;
	} e[];
};

struct fhook_addr_table {
	struct fhook_addr_slots *_Atomic slots;
	size_t used;
	unsigned int key_shift;		/* low bits every key shares (instruction alignment) */
};

static inline size_t fhook_addr_hash(const struct fhook_addr_table *t, unsigned long a)
{
	return (size_t)(((a >> t->key_shift) * 0x9e3779b97f4a7c15ul) >> 20);
}

/* The value at @key, or NULL: async-signal-safe. */
static inline void *fhook_addr_table_find(struct fhook_addr_table *t, unsigned long key)
{
	struct fhook_addr_slots *s = atomic_load_explicit(&t->slots, memory_order_acquire);
	size_t i;

	if (!s)
		return NULL;
	for (i = fhook_addr_hash(t, key) & s->mask;; i = (i + 1) & s->mask) {
		unsigned long k = atomic_load_explicit(&s->e[i].key, memory_order_acquire);

		if (k == key)
			return s->e[i].val;
		if (!k)
			return NULL;
	}
}

static inline void fhook_addr_slots_put(const struct fhook_addr_table *t,
					struct fhook_addr_slots *s, unsigned long key, void *val)
{
	size_t i;

	for (i = fhook_addr_hash(t, key) & s->mask;; i = (i + 1) & s->mask) {
		unsigned long k = atomic_load_explicit(&s->e[i].key, memory_order_relaxed);

		if (k == key || !k) {
			s->e[i].val = val;
			atomic_store_explicit(&s->e[i].key, key, memory_order_release);
			return;
		}
	}
}

/* Point @key, which the table holds already, at @val (no new entry: no growth). */
static inline void fhook_addr_table_replace(struct fhook_addr_table *t, unsigned long key,
					    void *val)
{
	fhook_addr_slots_put(t, atomic_load_explicit(&t->slots, memory_order_relaxed), key, val);
}

/* Map @key to @val (a key already there takes the new value): 0 or -ENOMEM. */
static inline int fhook_addr_table_add(struct fhook_addr_table *t, unsigned long key, void *val)
{
	struct fhook_addr_slots *s = atomic_load_explicit(&t->slots, memory_order_relaxed), *n;
	size_t size, i;

	if (!s || 2 * (t->used + 1) > s->mask + 1) {
		size = s ? 2 * (s->mask + 1) : 1024;
		n = calloc(1, sizeof(*n) + size * sizeof(n->e[0]));
		if (!n)
			return -ENOMEM;
		n->mask = size - 1;
		for (i = 0; s && i <= s->mask; i++)
			if (s->e[i].key)
				fhook_addr_slots_put(t, n, s->e[i].key, s->e[i].val);
		atomic_store_explicit(&t->slots, n, memory_order_release);
		s = n;
	}
	fhook_addr_slots_put(t, s, key, val);
	t->used++;
	return 0;
}

#endif /* FHOOK_ARCH_ADDR_TABLE_H */
