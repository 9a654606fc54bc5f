/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A signal that is not ours, handed on: to the handler that was installed
 * before ours (@prev), else what the kernel would have done without us for
 * @sig, die of it.  From a signal handler.
 */
#ifndef FHOOK_ARCH_SIGCHAIN_H
#define FHOOK_ARCH_SIGCHAIN_H

#include <signal.h>

static inline void fhook_arch_chain_signal(const struct sigaction *prev, int sig,
					   siginfo_t *info, void *ctx)
{
	if (prev->sa_flags & SA_SIGINFO) {
		if (prev->sa_sigaction) {
			prev->sa_sigaction(sig, info, ctx);
			return;
		}
	} else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

#endif /* FHOOK_ARCH_SIGCHAIN_H */
