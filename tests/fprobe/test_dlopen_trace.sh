#!/bin/bash
# `fhook trace -e 'f libfunc_*' -- prog`: the recorder registers its fprobe
# by glob at start-up, and prog opens a library with more libfunc_*
# functions three times, calls one (which calls the other) and closes it:
# every one of those calls is an event.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
LIB=$PWD/$B/tests/fprobe/libdlprobe.so
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ ! -x "$B/fhook" ] || [ ! -e "$LIB" ]; then
	echo "FAIL dlopen_trace_built: $B/fhook or $LIB missing (make test builds them)"
	exit 1
fi

cat > "$T/prog.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) int libfunc_main(int x)
{
	__asm__ volatile("");
	return x + 1;
}

int main(int argc, char **argv)
{
	volatile int sink = libfunc_main(1);
	int i;

	for (i = 0; i < 3; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*f)(int) = h ? (int (*)(int))dlsym(h, "libfunc_a") : NULL;

		if (!f) {
			fprintf(stderr, "prog: %s\n", dlerror());
			return 1;
		}
		sink = f(i);
		dlclose(h);
	}
	return sink < 0;
}
C
if ! cc -O2 -fpatchable-function-entry=5 -o "$T/prog" "$T/prog.c" 2>"$T/cc.err"; then
	echo "FAIL dlopen_trace_build: $(head -3 "$T/cc.err" | tr '\n' ' ')"
	exit 1
fi
set -f
if ! timeout 60 "$B/fhook" trace -o "$T/out" -e 'f libfunc_*' -- "$T/prog" "$LIB" 2>"$T/err"; then
	echo "FAIL dlopen_trace_run: $(tail -3 "$T/err" | tr '\n' ' ')"
	exit 1
fi
n=$(grep -c 'libfunc____entry:' "$T/out")
main=$(grep -c '(libfunc_main+0x0/' "$T/out")
if [ "$n" = 7 ] && [ "$main" = 1 ]; then
	echo "PASS dlopen_trace_events"
else
	echo "FAIL dlopen_trace_events: $n events ($main of libfunc_main), expected 7 (1)"
	sed 's/^/# /' "$T/out" "$T/err" | head -20
fi
grep -q 'trace: 7 events, 0 nmissed, 0 lost' "$T/err" &&
	echo "PASS dlopen_trace_summary" ||
	echo "FAIL dlopen_trace_summary: $(tail -1 "$T/err")"
# The process announces its objects again after each dlopen: the library's
# functions are named, also after the library was closed and opened again.
lib=$(grep -c '(libfunc_[ab]+0x0/' "$T/out")
if [ "$lib" = 6 ]; then
	echo "PASS dlopen_trace_names"
else
	echo "FAIL dlopen_trace_names: $lib of 6 calls into the library named"
	sed 's/^/# /' "$T/out" | head -10
fi
