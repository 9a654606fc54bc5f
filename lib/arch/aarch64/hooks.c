// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where arch code keeps what generic code handed it (lib/arch/hooks.h).
 */
#include "internal.h"

struct fhook_arch_hooks fhook_arch_hooks;
void *fhook_arch_dispatch;
void *fhook_arch_rethook_handler;

void __fhook_startup fhook_arch_init(const struct fhook_arch_hooks *hooks)
{
	fhook_arch_hooks = *hooks;
	__atomic_store_n(&fhook_arch_dispatch, (void *)hooks->dispatch, __ATOMIC_RELEASE);
}

void fhook_arch_rethook_init(fhook_rethook_handler_t handler, void *libgcc)
{
	fhook_a64_unwind_init(libgcc);
	__atomic_store_n(&fhook_arch_rethook_handler, (void *)handler, __ATOMIC_RELEASE);
}
