// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FPROBE_FL_EXIT_ON_UNWIND in C++: exceptions thrown through 1, 5 and 50
 * hooked frames, rethrown, caught in a hooked and in an unhooked
 * function, with a destructor that calls a hooked function in a cleanup
 * pad, in another thread, and through a function two fprobes watch.
 * Each check compares the exact sequence of entries (E), returns (X) and
 * unwound exits (U), and that every entry got exactly one exit.
 */
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "../check.h"
#include "unwind_log.h"

static volatile int sink;

extern "C" {

NOINLINE void t_mark(void)
{
	sink++;
}

NOINLINE void t_dtor(void)
{
	sink++;
}

NOINLINE int t_deep(int n)
{
	if (n <= 1)
		throw n;
	int r = t_deep(n - 1);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOINLINE int t_rethrow(int n)
{
	int r = 0;

	try {
		r = t_deep(n);
	} catch (...) {
		t_mark();
		throw;
	}
	__asm__ volatile("" : "+r"(r));
	return r;
}

NOINLINE int t_catcher(int n)
{
	int r = 0;

	try {
		r = t_deep(n);
	} catch (int) {
		t_mark();
	}
	__asm__ volatile("" : "+r"(r));
	return r;
}

}	/* extern "C" */

/*
 * Not a tail call: t_dtor's frame lies deeper than t_deep's was, so only
 * the unwinder itself can have reported t_deep before t_dtor runs.
 */
struct Guard {
	NOINLINE ~Guard() { t_dtor(); sink++; }
};

extern "C" NOINLINE int t_guarded(int n)
{
	Guard g;
	int r = t_deep(n);

	__asm__ volatile("" : "+r"(r));
	return r;
}

static const char *const names[] = {
	"t_mark", "t_dtor", "t_deep", "t_rethrow", "t_catcher", "t_guarded", nullptr,
};

static struct fprobe fp, fp2;

static void expect(const char *name, const std::string &want)
{
	CHECK(want == ul_log, name, "saw \"%s\", expected \"%s\"", ul_log, want.c_str());
	std::string b = std::string(name) + "_balanced";
	CHECK(ul_balanced(ul_log), b.c_str(), "unbalanced: \"%s\"", ul_log);
}

static std::string repeat(const char *item, int n)
{
	std::string s;

	for (int i = 0; i < n; i++)
		s += std::string(s.empty() ? "" : ",") + item;
	return s;
}

NOINLINE static void catch_here(int n)
{
	try {
		t_deep(n);
	} catch (int) {
		t_mark();
	}
}

int main()
{
	if (ul_register(&fp, names, FPROBE_FL_EXIT_ON_UNWIND)) {
		printf("FAIL register\n");
		return 1;
	}
	for (int n : { 1, 5, 50 }) {
		ul_reset();
		catch_here(n);
		std::string name = "through_" + std::to_string(n);
		expect(name.c_str(), repeat("E t_deep", n) + "," + repeat("U t_deep", n) +
			",E t_mark,X t_mark");
	}

	ul_reset();
	try {
		t_rethrow(2);
	} catch (int) {
		t_mark();
	}
	expect("rethrown", "E t_rethrow,E t_deep,E t_deep,U t_deep,U t_deep,E t_mark,X t_mark,"
	       "U t_rethrow,E t_mark,X t_mark");

	ul_reset();
	t_catcher(3);
	expect("caught_in_hooked", "E t_catcher,E t_deep,E t_deep,E t_deep,U t_deep,U t_deep,"
	       "U t_deep,E t_mark,X t_mark,X t_catcher");

	ul_reset();
	try {
		t_guarded(1);
	} catch (int) {
		t_mark();
	}
	expect("destructor_in_cleanup", "E t_guarded,E t_deep,U t_deep,E t_dtor,X t_dtor,"
	       "U t_guarded,E t_mark,X t_mark");

	ul_reset();
	std::thread([] { catch_here(5); }).join();
	expect("in_a_thread", repeat("E t_deep", 5) + "," + repeat("U t_deep", 5) +
		",E t_mark,X t_mark");

	/* a second fprobe on the same functions: both see every unwound exit */
	static const char *const one[] = { "t_deep", nullptr };
	memset(&fp2, 0, sizeof(fp2));
	fp2.entry_handler = ul_entry;
	fp2.exit_handler = ul_exit;
	fp2.entry_data_size = sizeof(struct ul_call);
	fp2.flags = FPROBE_FL_EXIT_ON_UNWIND;
	CHECK_EQ(register_fprobe_syms(&fp2, (const char **)one, 1), 0, "register_second");
	ul_reset();
	catch_here(2);
	expect("two_fprobes", repeat("E t_deep", 4) + "," + repeat("U t_deep", 4) +
		",E t_mark,X t_mark");
	unregister_fprobe(&fp2);

	CHECK_EQ(fprobe_nmissed(&fp), 0, "nmissed");
	unregister_fprobe(&fp);
	return check_exit();
}
