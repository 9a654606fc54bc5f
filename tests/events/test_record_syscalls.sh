#!/bin/bash
# What every untraced program of a recorded suite pays in system calls: a
# dash loop that runs /bin/true, under strace -f, as it is and under
# `fhook record`.  Each /bin/true process is counted from its fork to its
# exit (the shell's check of the program before execve, the loader mapping
# libfhook, libfhook's start-up and the session's set-up), and the counts
# averaged.  A count, not a time: it does not depend on the load of the
# machine.  On this VM a system call costs 1-2 us with its mitigations.
#
# Measured (Debian 12, x86-64): 31 system calls a child untraced, +35 to
# +37 recorded (+34 with libfhook linked -z noseparate-code, which fhook
# does not do: two mmap calls of the loader fewer; +44 while each program announced its objects at start-up, and
# the exec check read each program header with a pread of its own).  The
# bound is the measurement and a few calls of slack.
set -o pipefail
BOUND=41
N=5
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if ! command -v strace >/dev/null; then
	echo "SKIP record_syscalls: no strace"
	exit 0
fi
if [ ! -x /bin/dash ]; then
	echo "SKIP record_syscalls: no /bin/dash"
	exit 0
fi
# the last program has a site the recording takes (a run that traces nothing fails)
printf '__attribute__((noinline)) int mark(int x) { __asm__ volatile(""); return x; }\nint main(void) { return mark(0); }\n' > "$T/mark.c"
cc -O1 $("$F" cflags) -o "$T/mark" "$T/mark.c" || exit 2
loop="i=0; while [ \$i -lt $N ]; do /bin/true; i=\$((i + 1)); done; $T/mark"

# per_child TRACE: the system calls of each /bin/true process, averaged
per_child() {
	awk '/execve\("\/bin\/true"/ { t[$1] = 1 }
	     !/resumed>/ && !/^[0-9]+ +(\+\+\+|---)/ { n[$1]++ }
	     END { for (p in t) { s += n[p]; k++ } if (k) print int(s / k); else print -1 }' "$1"
}

if ! strace -f -qq -o "$T/plain" /bin/dash -c "$loop" ||
   ! strace -f -qq -o "$T/rec" "$F" record -e 'f mark' -o "$T/r.rec" -- \
	/bin/dash -c "$loop" 2>"$T/err"; then
	echo "FAIL record_syscalls_run: a run failed: $(head -3 "$T/err")"
	exit 1
fi
plain=$(per_child "$T/plain") || exit 1
rec=$(per_child "$T/rec") || exit 1
if [ "$plain" -le 0 ] || [ "$rec" -le 0 ] ||
   [ "$(grep -c 'execve("/bin/true"' "$T/rec")" != "$N" ]; then
	echo "FAIL record_syscalls_count: no /bin/true child in the traces ($plain, $rec)"
	exit 1
fi
added=$((rec - plain))
. tests/faults.sh
bounded record_syscalls "$added" "$BOUND" \
	"a child of dash: $plain system calls, +$added recorded (bound +$BOUND)"
