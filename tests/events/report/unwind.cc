// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_report.sh: frames left by an exception are unwound, not unfinished.
 *
 * main -> catcher -> thrower(3) -> ... -> thrower(0), which throws; catcher
 * catches it; then after() once.
 */
#include <cstdio>
#include <stdexcept>

#define F __attribute__((noinline, noipa))

static volatile int sink;

F void thrower(int n)
{
	if (n == 0)
		throw std::runtime_error("down here");
	thrower(n - 1);
	sink++;
}

F int catcher()
{
	try {
		thrower(3);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

F void after()
{
	sink++;
}

int main()
{
	int r = catcher();

	after();
	std::printf("%d\n", r);
	return 0;
}
