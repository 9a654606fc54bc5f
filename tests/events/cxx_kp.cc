// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A C++ program built without fhook's flags, for kprobe events by C++
 * name: overloads, a method, a template instantiated twice with the same
 * parameters, a function returning nothing, and parameters DWARF names;
 * overloads whose names, cut at an event name's 63 characters, are one.
 */
#include <cstdio>

#define NOINLINE __attribute__((noinline))

namespace geo {

struct Rect {
	double w, h;
	NOINLINE double area() const { return w * h; }
	NOINLINE void grow(double by) { w += by; h += by; }
};

NOINLINE double scale(double v, int k)
{
	return v * k;
}

NOINLINE long scale(long v, int k)
{
	return v * k;
}

template <typename T> struct Box {
	T v;
	NOINLINE T get() const { return v; }
};

} // namespace geo

namespace averylongnamespacename {
namespace inner {

struct Widget {
	int v;
};

NOINLINE int process_the_widget_now(Widget const &w, int a)
{
	return w.v + a;
}

NOINLINE int process_the_widget_now(Widget const &w, long a)
{
	return w.v + (int)a;
}

} // namespace inner
} // namespace averylongnamespacename

int main()
{
	geo::Rect r = { 2.0, 3.5 };
	geo::Box<int> bi = { 4 };
	geo::Box<long> bl = { 5 };
	double s;

	r.grow(1.0);
	s = r.area() + geo::scale(1.5, 4) + (double)geo::scale(7L, 3);
	/* one order for every compiler (a call's arguments have none) */
	long gl = bl.get();
	int gi = bi.get();

	std::printf("%g %d %ld\n", s, gi, gl);
	return 0;
}
