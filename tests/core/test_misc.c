// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Bad input and the less common flags: a site whose bytes were changed
 * behind our back, unknown symbols, PERMANENT, RECURSION, and the program's
 * own SIGTRAP handler still getting its own traps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

NOINLINE int m_ok(int x) { __asm__ volatile(""); return x + 1; }
NOINLINE int m_victim(int x) { __asm__ volatile(""); return x + 2; }
NOINLINE int m_inner(int x) { __asm__ volatile(""); return x + 3; }
NOINLINE int m_outer(int x) { __asm__ volatile(""); return m_inner(x) + 1; }

static volatile unsigned long hits, inner_hits, traps;
/* m_outer's site: the handler's ip (ftrace_location()) */
static unsigned long outer_ip;

/*
 * What a foreign tool might leave at a site (a function prologue), and
 * the program's own breakpoint instruction.
 */
#if defined(__aarch64__)
/* stp x29, x30, [sp, #-16]! */
static const unsigned char foreign[4] = { 0xfd, 0x7b, 0xbf, 0xa9 };
#define TRAP_INSN	"brk #0"
#define A64_BRK0	0xd4200000u
#else
/* push %rbp; mov %rsp, %rbp; nop */
static const unsigned char foreign[5] = { 0x55, 0x48, 0x89, 0xe5, 0x90 };
#define TRAP_INSN	"int3"
#endif

static void count(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		  struct ftrace_regs *fregs)
{
	hits++;
}

static void recurse(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		    struct ftrace_regs *fregs)
{
	/* a handler calling a traced function: RECURSION refuses the nested call */
	if (ip == outer_ip)
		m_inner(1);
	else
		inner_hits++;
	hits++;
}

static void on_trap(int sig, siginfo_t *si, void *uc)
{
#if defined(__aarch64__)
	ucontext_t *u = uc;

	/* a brk leaves the pc on itself: go on past it (raise() has none there) */
	if (*(const uint32_t *)u->uc_mcontext.pc == A64_BRK0)
		u->uc_mcontext.pc += 4;
#endif
	traps++;
}

/* the site of @fn */
static unsigned char *site(void *fn)
{
	return (unsigned char *)fn + TEST_SITE_OFF;
}

static void site_write(void *fn, const void *b, size_t len)
{
	memcpy(site(fn), b, len);
	__builtin___clear_cache((char *)site(fn), (char *)site(fn) + len);
}

static void case_unknown_symbols(void)
{
	CHECK_EQ(kallsyms_lookup_name("no_such_symbol_anywhere"), 0, "unknown_symbol");
	CHECK_EQ(kallsyms_lookup_name(""), 0, "empty_symbol");
}

/* a site changed behind our back: refused, nothing patched, the rest works */
static void case_foreign_bytes(void)
{
	struct ftrace_ops ops = { .func = count };
	struct fhook_stats st;
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char saved[sizeof(foreign)];
	unsigned long page;
	int r;

	page = (unsigned long)site(m_victim) & ~(psz - 1);
	memcpy(saved, site(m_victim), sizeof(saved));
	mprotect((void *)page, psz * 2, PROT_READ | PROT_WRITE | PROT_EXEC);
	site_write(m_victim, foreign, sizeof(foreign));
	mprotect((void *)page, psz * 2, PROT_READ | PROT_EXEC);
	ftrace_set_filter(&ops, (unsigned char *)"m_ok m_victim", 13, 1);
	r = register_ftrace_function(&ops);
	fhook_get_stats(&st);
	CHECK_EQ(r, -EINVAL, "foreign_bytes_refused");
	CHECK_EQ(st.nr_enabled, 0, "foreign_bytes_nothing_patched");
	CHECK(!memcmp(site(m_ok), test_site_nop, sizeof(test_site_nop)) &&
	      !memcmp(site(m_victim), foreign, sizeof(foreign)), "foreign_bytes_untouched", "");
	CHECK_EQ(st.nr_disabled, 1, "foreign_site_disabled");
	/* the rest keeps working; the bad site is no longer offered */
	r = ftrace_set_filter(&ops, (unsigned char *)"m_ok", 4, 1);
	CHECK_EQ(r, 0, "other_sites_filter");
	CHECK_EQ(register_ftrace_function(&ops), 0, "other_sites_register");
	hits = 0;
	m_ok(1);
	CHECK_EQ(hits, 1, "other_sites_work");
	CHECK_EQ(ftrace_set_filter_ip(&ops, (unsigned long)m_victim, 0, 0), -ENOENT,
		 "disabled_site_not_offered");
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
	mprotect((void *)page, psz * 2, PROT_READ | PROT_WRITE | PROT_EXEC);
	site_write(m_victim, saved, sizeof(saved));
	mprotect((void *)page, psz * 2, PROT_READ | PROT_EXEC);
}

/* PERMANENT: the global switch cannot be turned off under it */
static void case_permanent(void)
{
	struct ftrace_ops perm = { .func = count, .flags = FTRACE_OPS_FL_PERMANENT };

	ftrace_set_filter_ip(&perm, (unsigned long)m_ok, 0, 1);
	CHECK_EQ(register_ftrace_function(&perm), 0, "permanent_register");
	CHECK_EQ(ftrace_set_enabled(false), -EBUSY, "permanent_blocks_disable");
	CHECK(ftrace_is_enabled(), "still_enabled", "");
	unregister_ftrace_function(&perm);
	ftrace_free_filter(&perm);
}

/* the global switch off: ops register but stay nops, PERMANENT is refused */
static void case_global_switch(void)
{
	struct ftrace_ops ops = { .func = count };
	struct ftrace_ops perm = { .func = count, .flags = FTRACE_OPS_FL_PERMANENT };

	ftrace_set_filter(&ops, (unsigned char *)"m_ok", 4, 1);
	ftrace_set_filter_ip(&perm, (unsigned long)m_ok, 0, 1);
	CHECK_EQ(ftrace_set_enabled(false), 0, "disable");
	hits = 0;
	CHECK_EQ(register_ftrace_function(&ops), 0, "register_while_disabled");
	m_ok(1);
	CHECK_EQ(hits, 0, "disabled_means_nops");
	CHECK_EQ(register_ftrace_function(&perm), -EBUSY, "permanent_refused_when_disabled");
	CHECK_EQ(ftrace_set_enabled(true), 0, "enable");
	m_ok(1);
	CHECK_EQ(hits, 1, "enabled_again");
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
	ftrace_free_filter(&perm);
}

/* RECURSION: the nested call from the handler is refused */
static void case_recursion(void)
{
	struct ftrace_ops rec = { .func = recurse, .flags = FTRACE_OPS_FL_RECURSION };

	outer_ip = ftrace_location((unsigned long)m_outer);

	ftrace_set_filter(&rec, (unsigned char *)"m_outer m_inner", 15, 1);
	CHECK_EQ(register_ftrace_function(&rec), 0, "recursion_register");
	hits = inner_hits = 0;
	CHECK_EQ(m_outer(1), 5, "recursion_result");
	CHECK_EQ(hits, 2, "recursion_outer_and_inner");
	CHECK_EQ(inner_hits, 1, "recursion_nested_refused");
	unregister_ftrace_function(&rec);
	ftrace_free_filter(&rec);
}

static void case_recursion_trylock(void)
{
	int bit;

	bit = ftrace_test_recursion_trylock(0, 0);
	CHECK(bit >= 0 && ftrace_test_recursion_trylock(0, 0) < 0, "trylock_nests", "");
	ftrace_test_recursion_unlock(bit);
	CHECK(ftrace_test_recursion_trylock(0, 0) >= 0, "unlock_releases", "");
	ftrace_test_recursion_unlock(0);
}

/* the program's own traps still reach the program's own handler */
static void case_program_traps(void)
{
	struct ftrace_ops ops = { .func = count };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	ftrace_set_filter_ip(&ops, (unsigned long)m_ok, 0, 1);
	register_ftrace_function(&ops);	/* reinstalls ours, chained to it */
	traps = 0;
	__asm__ volatile(TRAP_INSN);
	raise(SIGTRAP);
	CHECK_EQ(traps, 2, "program_traps_chained");
	hits = 0;
	m_ok(1);
	CHECK_EQ(hits, 1, "hooks_after_program_handler");
	unregister_ftrace_function(&ops);
	ftrace_free_filter(&ops);
}

static const struct check_case cases[] = {
	CHECK_CASE(unknown_symbols),
	CHECK_CASE(foreign_bytes),
	CHECK_CASE(permanent),
	CHECK_CASE(global_switch),
	CHECK_CASE(recursion),
	CHECK_CASE(recursion_trylock),
	CHECK_CASE(program_traps),
};

int main(void)
{
	return check_run_cases(cases);
}
