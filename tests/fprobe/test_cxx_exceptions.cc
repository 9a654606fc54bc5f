// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Entry and exit probes on every function of a C++ program that throws
 * through hooked frames: caught a few frames up, caught and rethrown,
 * caught inside the hooked function itself, destructors run during
 * unwinding (and call hooked functions), std::exception_ptr across
 * threads, nested exceptions, exceptions in many threads at once.  The
 * output traced is the output untraced.
 */
#include <cstdio>
#include <cstring>
#include <cstdarg>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../check.h"
#include "progs.h"

static std::string output;
static std::mutex out_lock;

NOINLINE void out(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	std::lock_guard<std::mutex> g(out_lock);
	output += buf;
}

struct Guard {
	int id;
	NOINLINE explicit Guard(int i) : id(i) {}
	NOINLINE ~Guard() { out("~Guard %d\n", id); }
};

NOINLINE int thrower(int n)
{
	Guard g(n);

	if (n % 2)
		throw std::runtime_error("odd " + std::to_string(n));
	if (n % 5 == 0)
		throw n;
	return n * 10;
}

NOINLINE int level2(int n)
{
	Guard g(100 + n);
	int r = thrower(n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE int level1(int n)
{
	int r = level2(n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* caught a few hooked frames up */
NOINLINE int catch_far(int n)
{
	try {
		return level1(n);
	} catch (const std::exception &e) {
		out("caught %s\n", e.what());
		return -1;
	} catch (int v) {
		out("caught int %d\n", v);
		return -2;
	}
}

/* caught in the function itself, which then returns through its hook */
NOINLINE int catch_here(int n)
{
	int r = 0;

	try {
		if (n & 1)
			throw std::logic_error("here");
		r = n;
	} catch (const std::logic_error &) {
		r = -n;
	}
	__asm__ volatile("" : "+r"(r));
	return r;
}

NOINLINE int rethrower(int n)
{
	try {
		return level1(n);
	} catch (...) {
		out("rethrow %d\n", n);
		throw;
	}
}

NOINLINE int nested(int n)
{
	try {
		try {
			return rethrower(n);
		} catch (const std::runtime_error &e) {
			std::throw_with_nested(std::logic_error("outer"));
		}
	} catch (const std::logic_error &e) {
		try {
			std::rethrow_if_nested(e);
		} catch (const std::runtime_error &inner) {
			out("nested %s / %s\n", e.what(), inner.what());
		}
		return -3;
	} catch (int v) {
		out("nested int %d\n", v);
		return -4;
	}
	return 0;
}

NOINLINE long recurse_throw(int n)
{
	Guard g(1000 + (n % 3));
	if (!n)
		throw std::out_of_range("bottom");
	long r = recurse_throw(n - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE void thread_body(int id, std::exception_ptr *ep, long *sum)
{
	long s = 0;

	for (int i = 0; i < 2000; i++) {
		try {
			s += level1(i);
		} catch (const std::exception &) {
			s += 7;
		} catch (int v) {
			s += v;
		}
	}
	*sum = s;
	try {
		throw std::runtime_error("from thread " + std::to_string(id));
	} catch (...) {
		*ep = std::current_exception();
	}
}

NOINLINE void workload()
{
	output.clear();
	long sum = 0;

	for (int i = 0; i < 12; i++)
		out("catch_far %d -> %d\n", i, catch_far(i));
	for (int i = 0; i < 100000; i++)
		sum += catch_here(i);
	out("catch_here %ld\n", sum);
	for (int i = 0; i < 6; i++)
		out("nested %d -> %d\n", i, nested(i));
	try {
		recurse_throw(200);
	} catch (const std::exception &e) {
		out("deep %s\n", e.what());
	}

	std::vector<std::thread> ts;
	std::vector<std::exception_ptr> eps(6);
	std::vector<long> sums(6);
	std::string saved = output;	/* the threads' destructors print in any order */
	for (int i = 0; i < 6; i++)
		ts.emplace_back(thread_body, i, &eps[i], &sums[i]);
	for (auto &t : ts)
		t.join();
	output = saved;
	for (int i = 0; i < 6; i++) {
		try {
			std::rethrow_exception(eps[i]);
		} catch (const std::exception &e) {
			out("thread %d %ld %s\n", i, sums[i], e.what());
		}
	}
}

static unsigned long second_exits;
static struct fprobe second_fp;

static void second_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
			struct ftrace_regs *fregs, void *data)
{
	__atomic_add_fetch(&second_exits, 1, __ATOMIC_RELAXED);
}

int main()
{
	workload();
	std::string plain = output;

	int r = h_all_register();
	CHECK_EQ(r, 0, "register_all");
	workload();
	CHECK(plain == output, "traced_output_identical", "\n--- untraced\n%s--- traced\n%s",
	      plain.c_str(), output.c_str());
	CHECK(h_entries > 10000 && h_exits > 10000, "handlers_ran", "entries %lu exits %lu",
	      h_entries, h_exits);
	CHECK_EQ(h_bad, 0, "entry_data_intact");
	printf("# entries %lu exits %lu nmissed %lu\n", h_entries, h_exits,
	       fprobe_nmissed(&h_all_fp));

	/*
	 * A second fprobe with an exit handler on the same functions: its
	 * return hooks chain to the first one's stubs, and exceptions must
	 * unwind through both (an unwinder once looped forever here).
	 */
	second_fp.exit_handler = second_exit;
	r = register_fprobe(&second_fp, "*", "*h_all_*");
	CHECK_EQ(r, 0, "register_second");
	workload();
	CHECK(plain == output, "two_fprobes_output_identical", "\n%s", output.c_str());
	CHECK(second_exits > 10000, "second_exits_ran", "%lu", second_exits);
	CHECK_EQ(h_bad, 0, "entry_data_intact_with_two");
	CHECK_EQ(unregister_fprobe(&second_fp), 0, "unregister_second");
	r = unregister_fprobe(&h_all_fp);
	CHECK_EQ(r, 0, "unregister_all");
	workload();
	CHECK(plain == output, "untraced_again_identical", "\n%s", output.c_str());
	fputs(plain.c_str(), stdout);
	return check_exit();
}
