#!/bin/bash
# make install, then build a program against the installed library with
# pkg-config, as a user would.  The programs built must exit 0 too.
cd "$FHOOK_ROOT" || exit 2
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
if make -s install PREFIX=$T/usr >$T/log 2>&1; then echo "PASS install"; else echo "FAIL install: $(tail -3 $T/log)"; fi
for f in lib/libfhook.so lib/libfhook.a include/fhook/ftrace.h include/fhook/fhook.h bin/fhook lib/pkgconfig/fhook.pc; do
	[ -e $T/usr/$f ] && echo "PASS installed_${f//\//_}" || echo "FAIL installed_${f//\//_}: missing"
done
export PKG_CONFIG_PATH=$T/usr/lib/pkgconfig
cat > $T/p.c <<'C'
#include <fhook/fhook.h>
#include <stdio.h>
__attribute__((noinline)) int f(int x) { return x + 1; }
static int n;
static void h(unsigned long ip, unsigned long p, struct ftrace_ops *o, struct ftrace_regs *r) { n++; }
static struct ftrace_ops ops = { .func = h };
int main(void) { ftrace_set_filter_ip(&ops, (unsigned long)f, 0, 1); register_ftrace_function(&ops); f(1); f(2); printf("%d\n", n); return 0; }
C
if gcc $($T/usr/bin/fhook cflags) $(pkg-config --cflags fhook) -o $T/p $T/p.c $(pkg-config --libs fhook) -Wl,-rpath,$T/usr/lib 2>$T/err; then
	echo "PASS pkg_config_build"
	out=$($T/p); st=$?
	[ "$out" = 2 ] && [ $st = 0 ] && echo "PASS installed_library_works" ||
		echo "FAIL installed_library_works: '$out', exit $st"
else
	echo "FAIL pkg_config_build: $(head -3 $T/err)"
fi
# the static library too
if gcc $($T/usr/bin/fhook cflags) $(pkg-config --cflags fhook) -o $T/ps $T/p.c $T/usr/lib/libfhook.a $(pkg-config --libs-only-other --static fhook) -lelf -lpthread -ldl 2>$T/err; then
	out=$($T/ps); st=$?
	[ "$out" = 2 ] && [ $st = 0 ] && echo "PASS static_library_works" ||
		echo "FAIL static_library_works: '$out', exit $st"
else
	echo "FAIL static_library_build: $(head -3 $T/err)"
fi
