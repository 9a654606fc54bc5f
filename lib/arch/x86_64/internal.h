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

/* hooks->list_func, where the trampolines load it */
extern void *fhook_arch_list_func __arch_hidden;

/* the trampolines (trampoline.S): see TRAMPOLINE there */
extern char fhook_tramp_args[], fhook_tramp_regs[];
extern char fhook_tramp_args_nosse[], fhook_tramp_regs_nosse[];
extern char fhook_tramp_args_c[], fhook_tramp_regs_c[];

/*
 * Write @len bytes of code no thread runs yet (a kprobe's new slot) into
 * pages that stay executable for the others (text_poke.c).
 */
int fhook_text_write_new(unsigned long addr, const void *buf, size_t len) __arch_hidden;

/*
 * The SIGTRAP handler's question to kprobe.c: is the int3 at @ip a
 * kprobe's (or the int3 after a copy, for a post_handler)?  If so the
 * thread in the signal context @ctx is handled, and true is returned.
 */
bool fhook_kprobe_trap(unsigned long ip, void *ctx) __arch_hidden;

#endif /* FHOOK_ARCH_X86_64_INTERNAL_H */
