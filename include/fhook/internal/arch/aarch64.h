/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* aarch64's processor helpers for util (fhook/internal/processor.h). */
#ifndef FHOOK_INTERNAL_ARCH_AARCH64_H
#define FHOOK_INTERNAL_ARCH_AARCH64_H

/* a spin-wait hint to the core */
static inline void cpu_relax(void)
{
	__asm__ __volatile__("yield" ::: "memory");
}

#endif /* FHOOK_INTERNAL_ARCH_AARCH64_H */
