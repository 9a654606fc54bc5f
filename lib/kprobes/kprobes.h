/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kprobes layer's own declarations.
 */
#ifndef FHOOK_KPROBES_INTERNAL_H
#define FHOOK_KPROBES_INTERNAL_H

#include <stdbool.h>
#include <fhook/ftrace.h>
#include <fhook/kprobes.h>

struct fhook_kprobe_slot;
struct kp_site_ops;

/* One probed address, for good (see kprobes.c). */
struct kp_addr {
	struct kp_addr *next;		/* hash chain */
	unsigned long addr;
	struct kprobe **probes;		/* NULL-terminated; NULL: none */
	int method;			/* enum kprobe_method */
	bool placed;
	bool gone;			/* its object was unloaded (KPROBE_FLAG_GONE) */
	unsigned long obj_gen;		/* the load generation of its object */
	struct fhook_kprobe_slot *slot;	/* jump, trap */
	struct kp_site_ops *sops;	/* site: the ops of its batch */
	unsigned long site;		/* site: its address (after an endbr64) */
	char why[96];
};

#endif
