#!/bin/bash
# The way users load a probe: LD_PRELOAD=probe.so, where probe.so links
# libfhook.so.  libfhook then comes after libc in the loader's search order
# (libfhook preloaded first is the other order); in both, a program that
# blocks every signal and installs handlers with full masks runs to the end
# with every call probed and its output unchanged.
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
B=${FHOOK_BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$B/fhook" ] && [ -e "$B/libfhook.so" ] || make -s all >/dev/null 2>&1

cat > "$T/probe.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <fhook/fprobe.h>
static long entries, exits;
static int on_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *r, void *d) { __atomic_add_fetch(&entries, 1, 0); return 0; }
static void on_exit_(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		     struct ftrace_regs *r, void *d) { __atomic_add_fetch(&exits, 1, 0); }
static struct fprobe fp = { .entry_handler = on_entry, .exit_handler = on_exit_ };
__attribute__((constructor)) static void probe_init(void)
{
	int ret = register_fprobe(&fp, "w_*", NULL);
	if (ret) { fprintf(stderr, "probe: register_fprobe: %d\n", ret); exit(125); }
}
__attribute__((destructor)) static void probe_fini(void)
{
	unregister_fprobe(&fp);
	fprintf(stderr, "probe: %ld entries, %ld exits, %lu missed\n", entries, exits,
		fprobe_nmissed(&fp));
}
C
cat > "$T/prog.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#define NOINLINE __attribute__((noinline))
static volatile sig_atomic_t got;
static void on_usr1(int sig) { got++; }
NOINLINE int w_leaf(int x) { __asm__ volatile(""); return x + 1; }
NOINLINE int w_mid(int x) { int r = w_leaf(x); __asm__ volatile("" : "+r"(r)); return r * 2; }
int main(void)
{
	struct sigaction sa;
	sigset_t all;
	long s = 0;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (i = 0; i < 1000; i++)
		s += w_mid(i);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	raise(SIGUSR1);
	printf("sum %ld got %d\n", s, (int)got);
	return 0;
}
C
if ! cc -O2 -fPIC -shared -Iinclude -o "$T/probe.so" "$T/probe.c" -L"$B" -lfhook \
		-Wl,-rpath,"$PWD/$B" 2>"$T/err"; then
	echo "FAIL preload_dep/build_probe: $(head -3 "$T/err")"; exit 0
fi
if ! cc -O2 $("$B/fhook" cflags) -o "$T/prog" "$T/prog.c" 2>"$T/err"; then
	echo "FAIL preload_dep/build_prog: $(head -3 "$T/err")"; exit 0
fi
want_out="sum 1001000 got 1"
want_err="probe: 2000 entries, 2000 exits, 0 missed"
run() {	# run NAME PRELOAD
	local out err st
	# the preload for prog alone, not for timeout
	out=$(timeout 60 sh -c 'LD_PRELOAD=$1 exec "$2"' sh "$2" "$T/prog" 2>"$T/$1.err")
	st=$?
	err=$(cat "$T/$1.err")
	if [ $st != 0 ]; then
		echo "FAIL preload_dep/$1: exit status $st: $err"
	elif [ "$out" != "$want_out" ] || [ "$err" != "$want_err" ]; then
		echo "FAIL preload_dep/$1: stdout '$out', stderr '$err'"
	else
		echo "PASS preload_dep/$1"
	fi
}
run probe_only "$T/probe.so"
run libfhook_first "$PWD/$B/libfhook.so:$T/probe.so"
