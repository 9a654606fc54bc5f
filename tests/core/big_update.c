// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An update of more writes than one batch holds (32,768): the program
 * built by test_big_update.sh has one more object of N functions (gen_tab,
 * each with the compiler's pad).  One ops on every function is
 * registered, every function is called once, the ops is unregistered and
 * every function called again; then the same once more.  Each site must
 * hold a call while the ops is registered and the 5-byte nop after, and
 * the handler must see every function exactly once per round.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <fhook/fhook.h>

#include "../check.h"

extern const int gen_n;
extern int (*const gen_tab[])(int);

struct site {
	unsigned long ip;
	int idx;
};

static struct site *sites;
static unsigned int *hits;
static unsigned long stray;

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

static void handler(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	size_t lo = 0, hi = gen_n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sites[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (size_t)gen_n && sites[lo].ip == ip)
		hits[sites[lo].idx]++;
	else
		stray++;
}

static struct ftrace_ops ops = { .func = handler };

/* Sites whose first byte is @op (0xe8: a call), or the 5-byte nop (op 0). */
static int sites_holding(int op)
{
	static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	int i, n = 0;

	for (i = 0; i < gen_n; i++) {
		const unsigned char *b = (const unsigned char *)sites[i].ip;

		n += op ? b[0] == op : !memcmp(b, nop5, sizeof(nop5));
	}
	return n;
}

/* Call every function; how many returned the wrong value. */
static int call_all(void)
{
	int i, bad = 0;

	for (i = 0; i < gen_n; i++)
		bad += gen_tab[i](i) != 2 * i;
	return bad;
}

static void round_trip(int round)
{
	char name[64];
	int i, once = 0, ret;

	memset(hits, 0, gen_n * sizeof(*hits));
	stray = 0;
	ret = register_ftrace_function(&ops);
	snprintf(name, sizeof(name), "big_update_register_%d", round);
	CHECK_EQ(ret, 0, name);
	snprintf(name, sizeof(name), "big_update_nr_sites_%d", round);
	CHECK_EQ(ops.nr_sites, gen_n, name);
	snprintf(name, sizeof(name), "big_update_calls_written_%d", round);
	CHECK_EQ(sites_holding(0xe8), gen_n, name);
	snprintf(name, sizeof(name), "big_update_results_%d", round);
	CHECK_EQ(call_all(), 0, name);
	for (i = 0; i < gen_n; i++)
		once += hits[i] == 1;
	snprintf(name, sizeof(name), "big_update_each_hit_once_%d", round);
	CHECK_EQ(once, gen_n, name);
	snprintf(name, sizeof(name), "big_update_no_stray_hit_%d", round);
	CHECK_EQ(stray, 0, name);

	ret = unregister_ftrace_function(&ops);
	snprintf(name, sizeof(name), "big_update_unregister_%d", round);
	CHECK_EQ(ret, 0, name);
	snprintf(name, sizeof(name), "big_update_nops_written_%d", round);
	CHECK_EQ(sites_holding(0), gen_n, name);
	memset(hits, 0, gen_n * sizeof(*hits));
	call_all();
	for (i = 0, once = 0; i < gen_n; i++)
		once += hits[i] != 0;
	snprintf(name, sizeof(name), "big_update_no_hit_after_%d", round);
	CHECK_EQ(once + stray, 0, name);
}

int main(void)
{
	int i, found = 0;

	sites = calloc(gen_n, sizeof(*sites));
	hits = calloc(gen_n, sizeof(*hits));
	if (!sites || !hits)
		return 1;
	for (i = 0; i < gen_n; i++) {
		sites[i].ip = ftrace_location((unsigned long)gen_tab[i]);
		sites[i].idx = i;
		found += sites[i].ip != 0;
	}
	CHECK_EQ(found, gen_n, "big_update_sites_found");
	if (found != gen_n)
		return check_exit();
	qsort(sites, gen_n, sizeof(*sites), cmp_site);
	CHECK_EQ(sites_holding(0), gen_n, "big_update_nops_at_start");
	round_trip(1);
	round_trip(2);
	return check_exit();
}
