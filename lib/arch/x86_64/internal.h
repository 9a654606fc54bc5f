/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State shared by the files of lib/arch/x86_64/ and nothing else.
 */
#ifndef FHOOK_ARCH_X86_64_INTERNAL_H
#define FHOOK_ARCH_X86_64_INTERNAL_H

#include "arch/arch.h"

#define __arch_hidden __attribute__((visibility("hidden")))

/* What generic code handed over in fhook_arch_init() (hooks.c). */
extern struct fhook_arch_hooks fhook_arch_hooks __arch_hidden;
/* The same pointers where the trampolines load them. */
extern void *fhook_arch_dispatch __arch_hidden;
extern void *fhook_arch_rethook_handler __arch_hidden;
extern void (*fhook_arch_before_longjmp)(unsigned long target_sp) __arch_hidden;

/* the trampolines (trampoline.S) */
extern char fhook_tramp_args[], fhook_tramp_regs[];
/* The same with the dispatch inlined; used when urcu-bp has sys_membarrier. */
extern char fhook_tramp_args_fast[], fhook_tramp_regs_fast[];

#endif /* FHOOK_ARCH_X86_64_INTERNAL_H */
