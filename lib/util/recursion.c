// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The per-thread recursion bits (util/recursion.h) and the token that
 * tells ThreadSanitizer about RCU's ordering (util/rcu.h).
 */
#include "util/recursion.h"
#include "util/rcu.h"

__thread unsigned int fhook_recursion_bits __attribute__((tls_model("initial-exec")));

#ifdef __SANITIZE_THREAD__
char fhook_rcu_token;
#endif
