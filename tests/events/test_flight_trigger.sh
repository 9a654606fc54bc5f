#!/bin/bash
# The flight recorder's duration trigger, --trigger 'FUNC>DURATION': a
# call of FUNC that took DURATION or longer dumps the rings, decided at its
# return; the dump holds that call, timed, and the calls that led up to it;
# calls under the bound fire nothing; a thread that starts after the trigger
# fired is in the end's dump.  Also with -p, and the bad uses.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"; [ -n "${bg:-}" ] && kill $bg 2>/dev/null' EXIT
CHECK_PREFIX=flight_trigger
. tests/check.sh

cat > $T/slow.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) int step(int x) { __asm__ volatile(""); return x + 1; }
/* handle(i): ten steps and 1 ms, except call SLOW, which sleeps 60 ms */
__attribute__((noinline)) int handle(int i, int slow)
{
	int s = 0, k;

	for (k = 0; k < 10; k++)
		s += step(k);
	usleep(i == slow ? 60000 : 1000);
	return s;
}
/* slow N SLOW, or slow wait: every 20th call slow, until stdin closes */
int main(int argc, char **argv)
{
	int i, s = 0;

	if (!strcmp(argv[1], "wait")) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		for (i = 0; ; i++)
			s += handle(i, i % 20 == 19 ? i : -1);
	}
	for (i = 0; i < atoi(argv[1]); i++)
		s += handle(i, atoi(argv[2]));
	printf("%d\n", s);
	return 0;
}
C
gcc -O1 $($F cflags) -o $T/slow $T/slow.c || exit 2

# one slow call among 100: one dump for it, one at the end
out=$(timeout 60 $F record --flight-recorder --trigger 'handle>30ms' -o $T/t.rec -- \
	$T/slow 100 60 2> $T/err)
check status eq "$?: $out" "0: 5500"
check fired_once eq "$(grep -c 'a call of handle took' $T/err)" 1
check fired_said grep -qE '^fhook: record: flight recorder: a call of handle took (6[0-9]|[7-9][0-9])\.[0-9]{3} ms \(the trigger: 30\.000 ms\): dump 1, ' $T/err
check dumps eq "$(grep -o '[0-9]* dumps (the last at the end)' $T/err)" "2 dumps (the last at the end)"
# the slow call is in the recording, timed, with the steps before it
check slow_call_kept eq "$($F replay --format graph -F handle -t 30ms $T/t.rec 2>/dev/null |
	sed -E 's/^ *[0-9.]+ +//; s/\[ *[0-9]+\]/[TID]/; s/^(6[0-9]|[7-9][0-9])\.[0-9]{3} ms/60+ ms/')" \
	"60+ ms [TID] | handle();"
check calls_before_kept eq "$($F replay --format graph -F handle $T/t.rec 2>/dev/null |
	grep -c '| handle();\|handle() {')" 100

# no call over the bound: only the end's dump
out=$(timeout 60 $F record --flight-recorder --trigger 'handle>30ms' -o $T/n.rec -- \
	$T/slow 20 -1 2> $T/err)
check quiet_status eq "$?: $out" "0: 1100"
check quiet_not_fired eq "$(grep -c 'a call of handle took' $T/err)" 0
check quiet_dumps eq "$(grep -o '[0-9]* dump[s]* (the last at the end)' $T/err)" "1 dump (the last at the end)"

# a thread that starts after the trigger fired: its calls are in the end's
# dump, on their own thread, with the slow call of the first dump before them
gcc -O1 -pthread $($F cflags) -o $T/late tests/events/late_thread.c || exit 2
out=$(timeout 60 $F record --flight-recorder --trigger 'slow>30ms' -o $T/l.rec -- $T/late 2> $T/err)
check late_status eq "$?: $out" "0: 20"
check late_fired eq "$(grep -c 'a call of slow took' $T/err)" 1
check late_dumps eq "$(grep -o '[0-9]* dumps (the last at the end)' $T/err)" "2 dumps (the last at the end)"
# in time order: the slow call on the main thread, then the new thread's five calls
check late_calls eq "$($F replay $T/l.rec 2>/dev/null |
	sed -nE 's/^ *[^ ]*-([0-9]+) .*entry: \((slow|late)\+.*/\1 \2/p' |
	awk '{ if (!($1 in t)) t[$1] = "T" ++n; print t[$1], $2 }' | uniq -c | tr -s ' ' | tr '\n' ';')" \
	" 1 T1 slow; 5 T2 late;"

# FUNC>DURATION:N: every call over the bound, but N dumps at most, then the end's
out=$(timeout 60 $F record --flight-recorder --trigger 'handle>0ns:2' -o $T/c.rec -- \
	$T/slow 200 -1 2> $T/err)
check count_status eq "$?: $out" "0: 11000"
check count_fired eq "$(grep -c 'a call of handle took' $T/err)" 2
check count_said eq "$(grep -c '^fhook: record: flight recorder: the trigger fired its 2 dumps: no more but the end.s$' $T/err)" 1
check count_dumps eq "$(grep -o '[0-9]* dumps (the last at the end)' $T/err)" "3 dumps (the last at the end)"
out=$(timeout 30 $F record --flight-recorder --trigger 'handle>5ms:0' -o $T/x.rec -- $T/slow 1 -1 2>&1)
check count_zero eq "$?: $out" "2: fhook: record: --trigger handle>5ms:0: the count after ':' is a number of dumps, 1 to 4294967295"

# -p: attached, every slow call dumps; detached, the process runs on
coproc SLOW { exec $T/slow wait; }
bg=$SLOW_PID
read -r _ pid <&"${SLOW[0]}"
timeout 30 $F record -p "$pid" --flight-recorder --trigger 'handle>30ms' --duration 1 \
	-o $T/p.rec 2> $T/err
check attach_status eq "$?" 0
fired=$(grep -c 'a call of handle took' $T/err)
check attach_fired test "$fired" -ge 2
check attach_kept test "$($F replay --format graph -F handle -t 30ms $T/p.rec 2>/dev/null |
	grep -c 'handle();')" -ge "$fired"
check attach_runs_on kill -0 "$pid"
kill "$pid"
wait "$pid" 2>/dev/null
bg=

# bad uses: said, with the status of a bad definition or of bad usage
out=$(timeout 30 $F record --flight-recorder --trigger 'nosuch>5ms' -o $T/x.rec -- $T/slow 1 -1 2>&1)
check no_such_function eq "$?: $out" "1: fhook: record: --trigger nosuch>...: $T/slow has no such function"
out=$(timeout 30 $F record --flight-recorder --trigger 'handle>5 minutes' -o $T/x.rec -- $T/slow 1 -1 2>&1)
check bad_duration eq "$?: $out" "2: fhook: record: --trigger handle>5 minutes: DURATION is a number with ns, us, ms or s (FUNC>5ms, or FUNC>5ms:N for N dumps at most)"
out=$(timeout 30 $F record --trigger 'handle>5ms' -o $T/x.rec -- $T/slow 1 -1 2>&1)
check needs_flight eq "$?: $out" "2: fhook: record: --trigger needs --flight-recorder"
