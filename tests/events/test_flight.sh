#!/bin/bash
# The flight recorder: the last MB of each thread's events are kept in
# memory and written when a trigger fires (a signal to fhook) and at the
# end, the program's exit or crash; with -p too.  A dump holds the newest
# calls, contiguous, and no call is written twice across dumps.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
# (the test's own shell only: a background command's forked shell that a
# signal ends before it execs runs the EXIT trap too)
trap '[ "$BASHPID" = "$$" ] && { rm -rf "$T"; [ -n "${bg:-}" ] && kill $bg 2>/dev/null; }' EXIT
CHECK_PREFIX=flight
. tests/check.sh

cat > $T/fr.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) int a(int x) { __asm__ volatile(""); return x + 1; }
__attribute__((noinline)) int b(int x) { __asm__ volatile(""); return x + 2; }
/* fr N SIG|0 [crash|wait]: N calls of a, a signal to the parent (fhook), 1000 calls of b */
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), sig = atoi(argv[2]), i;
	volatile int s = 0;

	if (argc > 3 && !strcmp(argv[3], "wait")) {	/* for -p: run until stdin closes */
		printf("ready %d\n", getpid());
		fflush(stdout);
		while (getchar() != EOF)
			for (i = 0; i < n; i++)
				s += a(i);
		return 0;
	}
	for (i = 0; i < n; i++)
		s += a(i);
	if (sig) {
		kill(getppid(), sig);
		usleep(300000);
	}
	if (argc > 3 && !strcmp(argv[3], "crash"))
		abort();
	for (i = 0; i < 1000; i++)
		s += b(i);
	printf("done\n");
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/fr $T/fr.c || exit 2
EV=(-e 'f a x=$arg1:s32' -e 'f a%return' -e 'f b x=$arg1:s32' -e 'f b%return')

# summary REC: "KEPT the last x of a, contiguous or not, duplicates, calls of b".  A ring
# of 1 MiB holds 21845 calls of a (32 + 16 bytes each); a full one frees an eighth at
# once, so a dump keeps from 7/8 of that (19114) to all of it: KEPT is "full" then.
summary() {
	local n first last
	timeout 60 $F replay "$1" > $T/rep 2>/dev/null
	n=$(grep -c 'a__entry' $T/rep)
	first=$(grep 'a__entry' $T/rep | head -1 | grep -o 'x=[0-9]*' | cut -d= -f2)
	last=$(grep 'a__entry' $T/rep | tail -1 | grep -o 'x=[0-9]*' | cut -d= -f2)
	echo "$( [ "$n" -ge 19114 ] && [ "$n" -le 21845 ] && echo full || echo "$n") x=$last $( [ $((last - first + 1)) = "$n" ] && echo contiguous || echo "gaps") $(grep 'a__entry' $T/rep | sort | uniq -d | wc -l) $(grep -c 'b__entry' $T/rep)"
}

# a signal, then the end: the newest 1 MiB of a's calls (32 + 16 bytes each), then b's
out=$(timeout 60 $F record --flight-recorder=1 "${EV[@]}" -o $T/f.rec -- $T/fr 200000 12 2>&1)
check usr2_dumps eq "$?:$(grep -c 'flight recorder: dump 1,' <<< "$out"):$(grep -o '[0-9]* dumps (the last at the end)' <<< "$out")" \
	"0:1:2 dumps (the last at the end)"
check usr2_kept eq "$(summary $T/f.rec)" "full x=199999 contiguous 0 1000"
check usr2_report eq "$(timeout 60 $F report $T/f.rec 2>/dev/null | awk '$NF == "a" || $NF == "b"' |
	grep -c " $(grep -c 'a__entry' $T/rep) .* a$\| 1000 .* b$")" 2

# another signal; and none: the end alone
out=$(timeout 60 $F record --flight-recorder=1 --trigger signal:USR1 "${EV[@]}" -o $T/f1.rec -- $T/fr 50000 10 2>&1)
check usr1_dumps eq "$?:$(grep -o '[0-9]* dumps (the last at the end)' <<< "$out")" "0:2 dumps (the last at the end)"
check usr1_kept eq "$(summary $T/f1.rec)" "full x=49999 contiguous 0 1000"
out=$(timeout 60 $F record --flight-recorder=1 "${EV[@]}" -o $T/f0.rec -- $T/fr 50000 0 2>&1)
check end_only eq "$?:$(grep -o '[0-9]* dump (the last at the end)' <<< "$out")" "0:1 dump (the last at the end)"
check end_only_kept eq "$(summary $T/f0.rec | cut -d' ' -f4,5)" "0 1000"

# a crash: what led up to it is written at the end
out=$(timeout 60 $F record --flight-recorder=1 "${EV[@]}" -o $T/fc.rec -- $T/fr 100000 0 crash 2>&1)
check crash_status eq "$?" 134
check crash_kept eq "$(summary $T/fc.rec)" "full x=99999 contiguous 0 0"

# -p: attached, triggered twice, then detached
mkfifo $T/in
$T/fr 30000 0 wait < $T/in > $T/pout &
bg=$!
exec {w}> $T/in
for i in $(seq 100); do grep -q ready $T/pout && break; sleep 0.05; done
# (not under timeout: the signals are for fhook itself)
$F record -p $bg --flight-recorder=1 "${EV[@]}" -o $T/fp.rec 2> $T/perr &
fp=$!
for i in $(seq 200); do grep -q 'attached to' $T/perr && break; sleep 0.05; done
echo go >&$w; sleep 0.5; kill -USR2 $fp; sleep 0.5
echo go >&$w; sleep 0.5; kill -USR2 $fp; sleep 0.5
kill -INT $fp; wait $fp
check p_dumps eq "$?:$(grep -o '[0-9]* dumps (the last at the end)' $T/perr)" "0:3 dumps (the last at the end)"
# two rounds of 30000 calls, each dumped after its round: the newest of each, none twice
timeout 60 $F replay $T/fp.rec 2>/dev/null | grep -c 'a__entry' > $T/pn
check p_kept eq "$( [ "$(cat $T/pn)" -ge 38228 ] && [ "$(cat $T/pn)" -le 43690 ] && echo two-rings || cat $T/pn) $(summary $T/fp.rec | cut -d' ' -f2,4)" "two-rings x=29999 0"
exec {w}>&-
wait $bg

# usage
check trace_refused eq "$($F trace --flight-recorder -- true 2>&1; echo "rc=$?")" \
	"fhook: trace: --flight-recorder is for fhook record
rc=2"
check trigger_alone eq "$($F record --trigger signal:USR1 -- true 2>&1 | head -1)" \
	"fhook: record: --trigger needs --flight-recorder"
check trigger_bad eq "$($F record --flight-recorder --trigger 'signal:FOO' -- true 2>&1 | head -1)" \
	"fhook: record: --trigger signal:FOO: signal:USR1, signal:USR2, signal:QUIT, signal:PROF or signal:N (a real-time signal)"
