/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tests' reporting: one "PASS name" or "FAIL name: why" line per check;
 * tests/run.sh counts them.  A test program's exit status is the number of
 * failed checks (capped).
 */
#ifndef FHOOK_TEST_CHECK_H
#define FHOOK_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failed;

#define CHECK(cond, name, fmt, ...)						\
	do {									\
		if (cond) {							\
			printf("PASS %s\n", name);				\
		} else {							\
			printf("FAIL %s: " fmt "\n", name, ##__VA_ARGS__);	\
			check_failed++;						\
		}								\
		fflush(stdout);							\
	} while (0)

#define CHECK_EQ(a, b, name)							\
	CHECK((long)(a) == (long)(b), name, "%s = %ld, expected %ld", #a,	\
	      (long)(a), (long)(b))

static inline int check_exit(void)
{
	return check_failed > 100 ? 100 : check_failed;
}

#define NOINLINE __attribute__((noinline, noclone))

#endif
