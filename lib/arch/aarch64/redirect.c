// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Counted redirects (lib/arch/arch.h): the thread's pending redirects,
 * which fhook_redirect_thunk (trampoline.S) pops.
 */
#include <stddef.h>

#include "internal.h"

__thread struct fhook_redirect_stack fhook_redirect_tls
	__attribute__((tls_model("initial-exec"), visibility("hidden"), used));

_Static_assert(offsetof(struct fhook_redirect_stack, e) == 8, "thunk: entries from 8");
_Static_assert(sizeof(struct fhook_redirect) == 16, "thunk: 16 bytes an entry");
_Static_assert(offsetof(struct fhook_redirect, inflight) == 8, "thunk: inflight at 8");
_Static_assert(sizeof(struct ftrace_regs) == 36 * 8 + 8 * 16, "trampoline.S FR_SIZE");
_Static_assert(offsetof(struct ftrace_regs, fhook_full) == 34 * 8, "trampoline.S FR_FULL");
_Static_assert(offsetof(struct ftrace_regs, fhook_vregs) == 36 * 8, "trampoline.S FR_V");
