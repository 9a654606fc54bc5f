/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* x86-64's processor helpers for util (fhook/internal/processor.h). */
#ifndef FHOOK_INTERNAL_ARCH_X86_64_H
#define FHOOK_INTERNAL_ARCH_X86_64_H

/* a spin-wait hint to the core */
static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

#endif /* FHOOK_INTERNAL_ARCH_X86_64_H */
