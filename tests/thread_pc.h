/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pc of a thread its tracer has stopped (ptrace), for the tests that
 * single-step one to a place: att_park, test_stub_stalled_ptrace.
 */
#ifndef FHOOK_TEST_THREAD_PC_H
#define FHOOK_TEST_THREAD_PC_H

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

/* 0 when it cannot be read */
static inline unsigned long test_thread_pc(pid_t tid)
{
	struct user_regs_struct regs;
	struct iovec iov = { &regs, sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov))
		return 0;
#if defined(__x86_64__)
	return regs.rip;
#elif defined(__aarch64__)
	return regs.pc;
#else
#error "tests/thread_pc.h: the pc of this architecture"
#endif
}

#endif
