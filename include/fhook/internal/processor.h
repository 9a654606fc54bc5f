/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What util knows of the processor: the arch's cpu_relax(), from
 * fhook/internal/arch/<arch>.h (no code of its own beyond that).
 */
#ifndef FHOOK_INTERNAL_PROCESSOR_H
#define FHOOK_INTERNAL_PROCESSOR_H

#if defined(__x86_64__)
#include <fhook/internal/arch/x86_64.h>
#elif defined(__aarch64__)
#include <fhook/internal/arch/aarch64.h>
#else
static inline void cpu_relax(void)
{
	__asm__ __volatile__("" ::: "memory");
}
#endif

#endif /* FHOOK_INTERNAL_PROCESSOR_H */
