// C++ exceptions through traced frames: thrown through 1, 5 and 50 frames,
// rethrown (throw; and, with an argument, std::rethrow_exception), caught in a
// traced and in an untraced function (vs_cxx_untraced.cc, built without
// instrumentation), through an untraced frame, a destructor running during
// unwinding (and one that throws and catches a second exception itself), a
// second exception thrown and caught inside a catch handler.
#include <cstdio>
#include <cstdlib>
#include <exception>

// noipa: built with -O2 too, every call in the source stays a call (tail
// calls may become jumps)
#define NOIPA __attribute__((noipa))

struct Err {
	int code;
};

extern "C" int untraced_catch(void (*fn)(int), int arg);
extern "C" void untraced_call(void (*fn)(int), int arg);

NOIPA int note(int x)
{
	return x + 1;
}

NOIPA void down(int n)
{
	if (n == 0)
		throw Err{42};
	note(n);
	down(n - 1);
	note(-n);	// never reached
}

// n + 1 traced frames (down(n) .. down(0)) are removed by the throw
NOIPA int catch_through(int n)
{
	try {
		down(n - 1);
	} catch (const Err &e) {
		return note(e.code);
	}
	return 0;
}

struct Guard {
	int id;
	NOIPA ~Guard() { note(id); }
};

NOIPA void guarded(int n)
{
	Guard g{n};
	note(n);
	down(n);
}

NOIPA int catch_guarded(void)
{
	try {
		guarded(2);
	} catch (const Err &e) {
		return note(e.code);
	}
	return 0;
}

NOIPA void rethrower(int n)
{
	try {
		down(n);
	} catch (Err &e) {
		note(e.code);
		e.code++;
		throw;
	}
}

NOIPA int catch_rethrown(void)
{
	try {
		rethrower(3);
	} catch (const Err &e) {
		return note(e.code);
	}
	return 0;
}

NOIPA void down_void(int n)
{
	down(n);
}

// a destructor run by the unwinder throws and catches a second exception
struct Catcher {
	NOIPA ~Catcher()
	{
		try {
			down(1);
		} catch (const Err &e) {
			note(e.code);
		}
	}
};

NOIPA void guarded_catcher(int n)
{
	Catcher c;
	down(n);
}

NOIPA int catch_nested_unwind(void)
{
	try {
		guarded_catcher(2);
	} catch (const Err &e) {
		return note(e.code);
	}
	return 0;
}

// traced frames on both sides of an untraced one
NOIPA int catch_across_untraced(void)
{
	try {
		untraced_call(down_void, 2);
	} catch (const Err &e) {
		return note(e.code);
	}
	return 0;
}

// while one exception is being handled, another is thrown and caught
NOIPA int catch_in_handler(void)
{
	int r = 0;

	try {
		down(1);
	} catch (const Err &e) {
		r = catch_through(3);
		note(e.code);
	}
	return r;
}

NOIPA std::exception_ptr capture(int n)
{
	try {
		down(n);
	} catch (...) {
		return std::current_exception();
	}
	return nullptr;
}

NOIPA void rethrow_later(std::exception_ptr p)
{
	note(0);
	std::rethrow_exception(p);
}

NOIPA int catch_rethrow_exception(void)
{
	std::exception_ptr p = capture(2);

	try {
		rethrow_later(p);
	} catch (const Err &e) {
		return note(e.code);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int s = 0;

	// uftrace aborts in std::rethrow_exception(): that part runs alone
	if (argc > 1) {
		std::printf("%d\n", catch_rethrow_exception());
		return 0;
	}
	s += catch_through(1);
	s += catch_through(5);
	s += catch_through(50);
	s += catch_guarded();
	s += catch_rethrown();
	s += untraced_catch(down_void, 4);
	s += catch_across_untraced();
	s += catch_in_handler();
	s += catch_nested_unwind();
	s += note(s);
	std::printf("%d\n", s);
	return 0;
}
