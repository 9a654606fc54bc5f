#!/bin/bash
# Resource limits: a program under RLIMIT_AS (ulimit -v 512 MiB)
# allocates 100 MiB traced as it does untraced, with its return events
# recorded (the return hook's reservation is sized by the limit); and a
# process that finds no address space for its trace ring is named, with
# the reason, in the summary at exit.
set -o pipefail
cd "${FHOOK_ROOT:-$(dirname "$0")/../..}" || exit 2
F=$PWD/build/fhook
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK_PREFIX=rlimit
. tests/check.sh

gcc -O1 -g $($F cflags) -o $T/rlimit_prog tests/events/rlimit_prog.c -lpthread || exit 2
LIMIT=524288	# KiB

out=$(ulimit -v $LIMIT; $T/rlimit_prog malloc 100 2>&1); st=$?
check untraced_baseline eq "$st:$out" "0:ok 2"

out=$(ulimit -v $LIMIT; timeout 60 $F trace -e 'f work' -e 'f work%return $retval' -o $T/t \
	-- $T/rlimit_prog malloc 100 2>&1); st=$?
check trace_malloc_100 eq "$st:$out" "0:ok 2
fhook: trace: 6 events, 0 nmissed, 0 lost"
check trace_returns eq "$(grep -c 'work__entry: (work+0x0/' $T/t):$(grep -c '<- work) arg1=[23]$' $T/t)" "3:3"

out=$(ulimit -v $LIMIT; timeout 60 $F record -o $T/r.rec -- $T/rlimit_prog malloc 100 2>&1); st=$?
check record_malloc_100 eq "$st:$(head -1 <<< "$out")" "0:ok 2"
check record_no_untraced test -z "$(grep untraced <<< "$out")"
check record_events test -n "$(grep -E '^fhook: record: [1-9][0-9]* events, 0 nmissed, 0 lost' <<< "$out")"

# no room for a ring: named in the summary, with the reason
out=$(ulimit -v $LIMIT; timeout 60 $F trace -e 'f work' -o $T/t2 -- $T/rlimit_prog fill 2>&1); st=$?
pid=$(grep -o 'pid [0-9]*' <<< "$out" | head -1)
check fill_runs eq "$st:$(grep -c '^filled 2$' <<< "$out")" "0:1"
check fill_summary eq "$(grep -A1 'ran untraced' <<< "$out")" "fhook: trace: 1 process ran untraced, or partly:
fhook: trace:   $pid (rlimit_prog): threads untraced: no address space for a 2052 KiB trace ring under RLIMIT_AS 512 MiB: record with a smaller --buffer-size, or raise ulimit -v"
check fill_counted_lost test -n "$(grep -E '^fhook: trace: 0 events, 0 nmissed, 1 lost' <<< "$out")"

# 128 MiB: the number and the option that changes it, and the option works
out=$(ulimit -v 131072; timeout 60 $F trace -e 'f work' -o $T/t3 -- $T/rlimit_prog fill 2>&1); st=$?
check fill_128_said eq "$(grep -c 'no address space for a 2052 KiB trace ring under RLIMIT_AS 128 MiB: record with a smaller --buffer-size' <<< "$out")" 1
exit 0
