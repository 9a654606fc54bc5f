// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C++ names for tests/cli/test_cxxnames.sh: namespaces, a class template
 * with two instances, overloads, a const and a non-const overload, a
 * lambda, a function of an anonymous namespace, operator<<, and a
 * template function returning a namespaced type.  Prints 47.
 */
#include <cstdio>

#define NOINLINE __attribute__((noinline))

namespace geo {

struct P {
	int x, y;
};

template <class T> struct Box {
	T v;
	NOINLINE T get() const { return v; }
	NOINLINE void put(T x) { v = x; }
};

struct Out {
	int n;
};

NOINLINE Out &operator<<(Out &o, const P &p)
{
	o.n += p.x + p.y;
	return o;
}

NOINLINE int area(int w, int h) { return w * h; }
NOINLINE double area(double w, double h) { return w * h; }

struct Shape {
	int side;
	NOINLINE int &len() { return side; }
	NOINLINE const int &len() const { return side; }
};

} // namespace geo

namespace {
NOINLINE int helper(int x) { return x + 1; }
}

template <class T> NOINLINE geo::Box<T> make_box(T v)
{
	geo::Box<T> b;

	b.v = v;
	return b;
}

int main()
{
	geo::Box<int> bi = make_box(3);
	geo::Box<long> bl = make_box(4L);
	geo::Out o{0};
	geo::Shape s{7};
	const geo::Shape &cs = s;
	auto twice = [](int v) NOINLINE { return v * 2; };

	bi.put(5);
	bl.put(6);
	o << geo::P{1, 2};
	std::printf("%d\n", bi.get() + (int)bl.get() + geo::area(2, 3) + (int)geo::area(1.5, 2.0) +
		    s.len() + cs.len() + twice(4) + helper(1) + o.n);
	return 0;
}
