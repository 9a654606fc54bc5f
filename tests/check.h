/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tests' reporting: one "PASS name" or "FAIL name: why" line per check;
 * tests/run.sh counts them.  A test program's exit status is the number of
 * failed checks (capped).
 */
#ifndef FHOOK_TEST_CHECK_H
#define FHOOK_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Named cases, one behaviour each, in the style of the kernel's kselftest
 * harness: a program lists them in a table and its main() returns
 * check_run_cases(), which prints "# case NAME" before each so that a crash
 * or a FAIL is placed in its case.  Each case sets up and resets the state
 * it uses, so any one can run alone:
 *
 *	TEST_CASE=name ./test_x		only that case
 *	TEST_CASE=list ./test_x		the names, one a line
 */
struct check_case {
	const char *name;
	void (*fn)(void);
};

/* an entry of the table: CHECK_CASE(foo) runs case_foo() as "foo" */
#define CHECK_CASE(name)	{ #name, case_##name }

#define check_run_cases(cases)							\
	check_run_cases_n(cases, sizeof(cases) / sizeof((cases)[0]))

static inline int check_run_cases_n(const struct check_case *cases, size_t n)
{
	const char *only = getenv("TEST_CASE");
	size_t i;
	int ran = 0;

	if (only && !*only)
		only = NULL;
	for (i = 0; i < n; i++) {
		if (only && !strcmp(only, "list")) {
			printf("%s\n", cases[i].name);
			continue;
		}
		if (only && strcmp(only, cases[i].name))
			continue;
		printf("# case %s\n", cases[i].name);
		fflush(stdout);
		cases[i].fn();
		ran++;
	}
	if (only && !strcmp(only, "list"))
		return 0;
	/* a misspelt name must not pass by running nothing */
	if (!ran) {
		printf("FAIL test_case: no case named %s\n", only);
		check_failed++;
	}
	return check_exit();
}

#define NOINLINE __attribute__((noinline, noclone))

/*
 * Where the site of a function built with $(FHOOK_SITE_CFLAGS) lies (no
 * endbr64 before it; past "bti c" in a build with BTI landing pads), and
 * the nop fhook keeps there; and how many core serializations one batch
 * of site changes costs, however many sites it has: on aarch64 each site
 * changes with one store and cache maintenance, which other threads may
 * run through (none); on x86-64 the int3 protocol's three steps (three).
 */
#if defined(__aarch64__)
#ifdef __ARM_FEATURE_BTI_DEFAULT
#define TEST_SITE_OFF	8	/* past "bti c" and "mov x9, x30" */
#else
#define TEST_SITE_OFF	4	/* past "mov x9, x30" */
#endif
#define TEST_BATCH_SYNCS	0
static const unsigned char test_site_nop[4] __attribute__((unused)) = { 0x1f, 0x20, 0x03, 0xd5 };
#else
#define TEST_SITE_OFF	0
#define TEST_BATCH_SYNCS	3
static const unsigned char test_site_nop[5] __attribute__((unused)) = {
	0x0f, 0x1f, 0x44, 0x00, 0x00
};
#endif

/* What the site at @ip calls (a stub of fhook's), 0 when it calls nothing. */
static inline __attribute__((unused)) unsigned long test_site_call_target(unsigned long ip)
{
	const unsigned char *b = (const unsigned char *)ip;
#if defined(__aarch64__)
	uint32_t w;

	memcpy(&w, b, 4);
	if ((w & 0xfc000000u) != 0x94000000u)	/* bl */
		return 0;
	return ip + (unsigned long)((long)((int32_t)(w << 6) >> 6) * 4);
#else
	int32_t rel;

	if (b[0] != 0xe8)			/* call rel32 */
		return 0;
	memcpy(&rel, b + 1, 4);
	return ip + 5 + (long)rel;
#endif
}

#endif
