// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A C++ program for fhook record's tests: methods in a namespace, an
 * overloaded function, parameters with DWARF names, and an exception
 * thrown through traced frames.  Built with g++ and with clang++.
 */
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#define NOINLINE __attribute__((noinline))

namespace geo {

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};

struct Rect : Shape {
	double w, h;
	Rect(double w_, double h_) : w(w_), h(h_) {}
	NOINLINE double area() const override { return w * h; }
};

NOINLINE double scale(double v, int k)
{
	return v * k;
}

NOINLINE long scale(long v, int k)
{
	return v * k;
}

NOINLINE int check(int depth)
{
	if (!depth)
		throw std::runtime_error("deep");
	return check(depth - 1) + 1;
}

} // namespace geo

static volatile double sink;

int main(int argc, char **argv)
{
	geo::Rect r(2.0, 3.5);
	geo::Shape *s = &r;

	sink = s->area();
	sink += geo::scale(1.5, 4);
	sink += geo::scale(7L, 3);
	if (argc > 1 && !strcmp(argv[1], "throw")) {
		try {
			geo::check(3);
		} catch (const std::exception &e) {
			std::printf("caught %s\n", e.what());
		}
	}
	std::printf("%g\n", (double)sink);
	return 0;
}
