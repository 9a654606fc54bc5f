/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core state shared by the files of lib/core.
 */
#ifndef FHOOK_CORE_H
#define FHOOK_CORE_H

#include <pthread.h>
#include <fhook/ftrace.h>
#include <fhook/fhook.h>

#include "hash.h"
#include "recursion.h"

#define __hidden __attribute__((visibility("hidden")))

/* Registered ops, RCU-protected; changed under ftrace_lock. */
extern struct ftrace_ops *ftrace_ops_list __hidden;
extern pthread_mutex_t ftrace_lock __hidden;

void ftrace_ops_list_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
			  struct ftrace_regs *fregs) __hidden;
ftrace_func_t fhook_ops_func(struct ftrace_ops *ops) __hidden;

/* Wait until no thread can be inside a handler that began before. */
void fhook_synchronize(void) __hidden;
void *fhook_libc_sym(const char *name) __hidden;

#endif /* FHOOK_CORE_H */
