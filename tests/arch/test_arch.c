// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arch functions of the call-site patching contract: each of ftrace_make_call, ftrace_make_nop,
 * ftrace_modify_call and ftrace_init_nop in its four outcomes (0, -EFAULT,
 * -EINVAL, -EPERM), with the bytes at the site checked after every call,
 * and the ftrace-bug report of a failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fhook/fhook.h>

#include "../check.h"

/* fentry-style callees: touch no argument register, just count */
volatile unsigned long count_a, count_b;
__asm__(".text\n"
	".globl tramp_a\n.type tramp_a,@function\ntramp_a:\n"
	"	lock incq count_a(%rip)\n	ret\n"
	".globl tramp_b\n.type tramp_b,@function\ntramp_b:\n"
	"	lock incq count_b(%rip)\n	ret\n");
void tramp_a(void);
void tramp_b(void);

NOINLINE int target_fn(int x) { __asm__ volatile(""); return x * 3; }

static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static void call_bytes(unsigned char *b, unsigned long ip, unsigned long to)
{
	int rel = (int)(to - (ip + 5));

	b[0] = 0xe8;
	memcpy(b + 1, &rel, 4);
}

static int same(unsigned long ip, const unsigned char *want)
{
	return !memcmp((void *)ip, want, 5);
}

/* Run @fn with stderr captured into @buf. */
#define CAPTURE_STDERR(buf, stmt)						\
	do {									\
		char path_[] = "/tmp/fhook-test-XXXXXX";			\
		int fd_ = mkstemp(path_), saved_ = dup(2);			\
		ssize_t n_;							\
		fflush(stderr);							\
		dup2(fd_, 2);							\
		stmt;								\
		fflush(stderr);							\
		dup2(saved_, 2);						\
		close(saved_);							\
		n_ = pread(fd_, buf, sizeof(buf) - 1, 0);			\
		buf[n_ > 0 ? n_ : 0] = 0;					\
		close(fd_);							\
		unlink(path_);							\
	} while (0)

static unsigned long a, b;	/* the two trampolines */
static struct dyn_ftrace rec;	/* a copy of target_fn's record */
static unsigned char want[5];
static char err[4096];

/*
 * target_fn's record, its site a nop and the counts zero; false (and a
 * FAIL) if there is no record, which the target_site case reports too.
 */
static bool setup(const char *name)
{
	struct dyn_ftrace *recp = ftrace_lookup_rec((unsigned long)target_fn);

	a = (unsigned long)tramp_a;
	b = (unsigned long)tramp_b;
	count_a = count_b = 0;
	if (!recp) {
		printf("FAIL %s_setup: no record for target_fn\n", name);
		check_failed++;
		return false;
	}
	rec = *recp;
	if (!same(rec.ip, nop5)) {
		printf("FAIL %s_setup: target_fn's site is not a nop\n", name);
		check_failed++;
		return false;
	}
	return true;
}

static void case_target_site(void)
{
	struct dyn_ftrace *recp = ftrace_lookup_rec((unsigned long)target_fn);

	CHECK(recp != NULL, "lookup_rec", "no record for target_fn");
	if (!recp)
		return;
	rec = *recp;
	CHECK(same(rec.ip, nop5), "initial_nop", "");
}

/* make_call: 0, then -EINVAL on a site that is not a nop */
static void case_make_call(void)
{
	int r;

	if (!setup("make_call"))
		return;
	r = ftrace_make_call(&rec, a);
	call_bytes(want, rec.ip, a);
	CHECK(r == 0 && same(rec.ip, want), "make_call_ok", "r=%d", r);
	CHECK(target_fn(2) == 6 && count_a == 1, "make_call_runs", "count_a=%lu", count_a);
	CAPTURE_STDERR(err, r = ftrace_make_call(&rec, b));
	CHECK(r == -EINVAL && same(rec.ip, want), "make_call_einval", "r=%d", r);
	CHECK(strstr(err, "ftrace failed to modify") && strstr(err, "target_fn+0x0/0x") &&
	      strstr(err, "expected: 0f:1f:44:00:00") && strstr(err, "actual:   e8:"),
	      "bug_report", "stderr was: %s", err);
	ftrace_make_nop(&rec, a);
}

/* modify_call: 0, -EINVAL when the old target is not what is called */
static void case_modify_call(void)
{
	struct fhook_stats s0, s1;
	int r;

	if (!setup("modify_call"))
		return;
	ftrace_make_call(&rec, a);
	target_fn(2);	/* count_a 1, as the make_call case leaves it */
	r = ftrace_modify_call(&rec, a, b);
	call_bytes(want, rec.ip, b);
	CHECK(r == 0 && same(rec.ip, want), "modify_call_ok", "r=%d", r);
	CHECK(target_fn(1) == 3 && count_b == 1 && count_a == 1, "modify_call_runs", "");
	CAPTURE_STDERR(err, r = ftrace_modify_call(&rec, a, b));
	CHECK(r == -EINVAL && same(rec.ip, want), "modify_call_einval", "r=%d", r);
	fhook_get_stats(&s0);
	r = ftrace_modify_call(&rec, b, b);
	fhook_get_stats(&s1);
	CHECK(r == 0 && same(rec.ip, want) && s1.writes > s0.writes, "modify_call_same_addr",
	      "r=%d writes %lu->%lu", r, s0.writes, s1.writes);
	ftrace_make_nop(&rec, b);
}

/* make_nop: -EINVAL for the wrong target, then 0 */
static void case_make_nop(void)
{
	int r;

	if (!setup("make_nop"))
		return;
	ftrace_make_call(&rec, b);
	call_bytes(want, rec.ip, b);
	target_fn(1);	/* count_b 1 */
	CAPTURE_STDERR(err, r = ftrace_make_nop(&rec, a));
	CHECK(r == -EINVAL && same(rec.ip, want), "make_nop_einval", "r=%d", r);
	r = ftrace_make_nop(&rec, b);
	CHECK(r == 0 && same(rec.ip, nop5), "make_nop_ok", "r=%d", r);
	CHECK(target_fn(1) == 3 && count_b == 1, "make_nop_silent", "");
}

/* init_nop on a nop: 0, nothing changes */
static void case_init_nop_already(void)
{
	int r;

	if (!setup("init_nop_already"))
		return;
	r = ftrace_init_nop(&rec);
	CHECK(r == 0 && same(rec.ip, nop5), "init_nop_already", "r=%d", r);
}

/* -EFAULT: a site that is not mapped */
static void case_efault(void)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dyn_ftrace bad;
	int r;

	munmap(p, 4096);
	bad.ip = (unsigned long)p + 16;
	bad.flags = 0;
	CAPTURE_STDERR(err, r = ftrace_make_call(&bad, bad.ip + 64));
	CHECK_EQ(r, -EFAULT, "make_call_efault");
	CHECK(strstr(err, "ftrace faulted on reading") != NULL, "efault_report", "%s", err);
	CAPTURE_STDERR(err, r = ftrace_make_nop(&bad, bad.ip + 64));
	CHECK_EQ(r, -EFAULT, "make_nop_efault");
	CAPTURE_STDERR(err, r = ftrace_modify_call(&bad, bad.ip + 64, bad.ip + 128));
	CHECK_EQ(r, -EFAULT, "modify_call_efault");
	CAPTURE_STDERR(err, r = ftrace_init_nop(&bad));
	CHECK_EQ(r, -EFAULT, "init_nop_efault");
}

/* init_nop: five 1-byte nops become one; unknown bytes are refused */
static void case_init_nop_pad(void)
{
	unsigned char junk[5] = { 0x55, 0x48, 0x89, 0xe5, 0x90 };
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dyn_ftrace t = { (unsigned long)p + 32, 0 };
	int r;

	memset(p, 0x90, 64);
	memcpy(p + 128, junk, 5);
	mprotect(p, 4096, PROT_READ | PROT_EXEC);
	r = ftrace_init_nop(&t);
	CHECK(r == 0 && same(t.ip, nop5) && p[t.ip - (unsigned long)p + 5] == 0x90,
	      "init_nop_pad5", "r=%d", r);
	t.ip = (unsigned long)p + 128;
	CAPTURE_STDERR(err, r = ftrace_init_nop(&t));
	CHECK(r == -EINVAL && same(t.ip, junk), "init_nop_einval", "r=%d", r);
	CHECK(strstr(err, "actual:   55:48:89:e5:90") != NULL, "init_nop_report", "%s", err);
	/* the page is back to read+exec: writing must fault */
	munmap(p, 4096);
}

/* -EPERM: code in a read-only shared file mapping cannot be written */
static void case_eperm(void)
{
	char path[] = "/tmp/fhook-ro-XXXXXX";
	int fd = mkstemp(path), r;
	unsigned char page[4096];
	struct dyn_ftrace ro;
	unsigned char *p;

	memset(page, 0xcc, sizeof(page));
	memcpy(page + 16, nop5, 5);
	memset(page + 64, 0x90, 5);
	call_bytes(page + 256, 0, 5);	/* rel32 0: calls the next instruction */
	if (write(fd, page, sizeof(page)) != sizeof(page)) {
		printf("FAIL eperm_setup: cannot write %s\n", path);
		check_failed++;
		close(fd);
		unlink(path);
		return;
	}
	close(fd);
	fd = open(path, O_RDONLY);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	ro.ip = (unsigned long)p + 16;
	ro.flags = 0;
	CAPTURE_STDERR(err, r = ftrace_make_call(&ro, ro.ip + 512));
	CHECK(r == -EPERM && same(ro.ip, nop5), "make_call_eperm", "r=%d", r);
	CHECK(strstr(err, "ftrace faulted on writing") != NULL, "eperm_report", "%s", err);
	ro.ip = (unsigned long)p + 64;
	CAPTURE_STDERR(err, r = ftrace_init_nop(&ro));
	CHECK(r == -EPERM && p[64] == 0x90 && p[65] == 0x90, "init_nop_eperm", "r=%d", r);
	/* make_nop and modify_call need a call there: 0xe8 rel32 to p+256+5+0 */
	ro.ip = (unsigned long)p + 256;
	CAPTURE_STDERR(err, r = ftrace_make_nop(&ro, ro.ip + 5 + 0));
	CHECK(r == -EPERM && p[256] == 0xe8, "make_nop_eperm", "r=%d", r);
	CAPTURE_STDERR(err, r = ftrace_modify_call(&ro, ro.ip + 5, ro.ip + 64));
	CHECK(r == -EPERM && p[256] == 0xe8, "modify_call_eperm", "r=%d", r);
	munmap(p, 4096);
	close(fd);
	unlink(path);
}

static const struct check_case cases[] = {
	CHECK_CASE(target_site),
	CHECK_CASE(make_call),
	CHECK_CASE(modify_call),
	CHECK_CASE(make_nop),
	CHECK_CASE(init_nop_already),
	CHECK_CASE(efault),
	CHECK_CASE(init_nop_pad),
	CHECK_CASE(eperm),
};

int main(void)
{
	return check_run_cases(cases);
}
